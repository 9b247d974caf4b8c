#include "models/wan/wan_vae_memory.h"

#include <algorithm>

#include <c10/core/ScalarType.h>

namespace shotchain::models {
namespace {

using Kind = WanVaeBlock::Kind;

// What a convolution allocates beyond its input and output depends on the kernel libtorch picks
// (libtorch 1.13 CPU, ConvUtils use_mkldnn): oneDNN when N·C·D·H (5-D) or N·C·H·W (4-D) of the
// input exceeds 20480, else the native slow_conv2d/3d, which unfolds the whole input into a
// columns buffer of (C·kernel volume) × output positions (skipped only for 1×1 conv2d).
// oneDNN's reorders to and from blocked layouts (and its scratchpad) are counted as kOneDnnCopies
// of input plus output: 1.5, measured with VaePeakMeter on the Wan 2.1 sizes (bench vae at
// 64x64 and 128x64: 1.0 left the estimate 10 % under the measured peak).
constexpr double kOneDnnThreshold = 20480;
constexpr double kOneDnnCopies = 1.5;

struct ConvShape {
  double cin = 0, tin = 1, height = 0, width = 0;  // input (time already padded)
  double cout = 0, tout = 1;
  double kernel = 1;  // kernel volume
  bool fiveD = true;
};

double convExtra(const ConvShape& c) {
  const double px = c.height * c.width;
  const double rows = c.fiveD ? c.cin * c.tin * c.height : c.cin * c.height * c.width;
  if (rows > kOneDnnThreshold) return kOneDnnCopies * (c.cin * c.tin * px + c.cout * c.tout * px);
  if (!c.fiveD && c.kernel == 1) return 0;
  return c.kernel * c.cin * c.tout * px;
}

// Element counts, per one sample.
struct Walk {
  double peak = 0;   // largest transient seen (elements)
  double cache = 0;  // causal cache elements
  double held = 0;   // a Wan 2.2 stage's input, alive until the stage's shortcut
  void moment(double elements) { peak = std::max(peak, elements + held); }
};

// One decoder chunk at latent size h0 × w0. `steady`: a chunk after the first (temporal upsamples
// double the frames; caches are full).
void walkDecoder(const WanVaeConfig& config, double h0, double w0, bool steady, Walk& w) {
  const double z = static_cast<double>(config.zDim);
  double t = 1, hh = h0, ww = w0, px = h0 * w0;
  const auto blocks = wanVaeDecoderBlocks(config);
  double c = static_cast<double>(blocks.front().in);
  auto k3 = [&](double cin, double cout) { return convExtra({cin, t + 2, hh, ww, cout, t, 27, true}); };
  // conv1: padded latent → C channels.
  w.cache += 2 * z * px;
  w.moment(z * (t + 2) * px + c * t * px + k3(z, c));
  for (const WanVaeBlock& b : blocks) {
    const double in = static_cast<double>(b.in), out = static_cast<double>(b.out);
    switch (b.kind) {
      case Kind::Residual: {
        const bool shortcut = b.in != b.out;
        const double x = in * t * px, h = shortcut ? out * t * px : x;
        const double p1 = in * (t + 2) * px, y = out * t * px, p2 = out * (t + 2) * px;
        w.cache += 2 * in * px + 2 * out * px;
        if (shortcut) w.moment(x + h + convExtra({in, t, hh, ww, out, t, 1, true}));
        w.moment(x + (shortcut ? h : 0) + p1 + std::max(2 * in * px, t * px));
        w.moment(h + p1 + y + k3(in, out));
        w.moment(h + y + p2 + std::max(2 * out * px, t * px));
        w.moment(h + p2 + y + k3(out, out));
        c = out;
        break;
      }
      case Kind::Attention: {
        // Per frame: normed → qkv (conv output + its transposed copy), scores + softmax, output.
        const double x = c * t * px, cp = c * px;
        const double qkvConv = convExtra({c, 1, hh, ww, 3 * c, 1, 1, false});
        const double projConv = convExtra({c, 1, hh, ww, c, 1, 1, false});
        const double frame = std::max({7 * cp + qkvConv, 3 * cp + 2 * px * px, 3 * cp + px * px + 3 * cp + projConv});
        w.moment(2 * x + frame);
        break;
      }
      case Kind::Upsample2d:
      case Kind::Upsample3d: {
        if (b.kind == Kind::Upsample3d) {
          w.cache += 2 * in * px;
          if (steady) {
            const double x = in * t * px, p = in * (t + 2) * px, y = 2 * in * t * px;
            w.moment(x + p + 2 * in * px);
            w.moment(p + y + convExtra({in, t + 2, hh, ww, 2 * in, t, 3, true}));
            w.moment(2 * y);
            t *= 2;
          }
        }
        const double x = in * t * px, o = out * t * 4 * px, up = in * 4 * px, f = out * 4 * px;
        w.moment(x + o + up + f + convExtra({in, 1, 2 * hh, 2 * ww, out, 1, 9, false}));
        px *= 4;
        hh *= 2;
        ww *= 2;
        c = out;
        break;
      }
      case Kind::StageInput:
        w.held = c * t * px;
        break;
      case Kind::DupUpShortcut: {
        // The repeated copy and its spread-out layout beside the stage's output.
        const double y = c * t * px;
        w.held = 0;
        w.moment(3 * y);
        break;
      }
      case Kind::Downsample2d:
      case Kind::Downsample3d:
      case Kind::AvgDownShortcut:
        break;  // encoder only
    }
  }
  // head: RMS_norm + SiLU into the padded input, conv to the pixel channels (3, or 12 before Wan 2.2's
  // unpatchify copy), then float32 + clamp.
  const double pc = static_cast<double>(config.pixelChannels());
  const double x = c * t * px, p = c * (t + 2) * px, rgb = pc * t * px;
  w.cache += 2 * c * px;
  w.moment(x + p + std::max(2 * c * px, t * px));
  w.moment(p + rgb + k3(c, pc));
  if (pc > 3) w.moment(2 * rgb);
}

}  // namespace

WanVaeDecodeMemory estimateWanVaeDecode(const WanVaeConfig& config, std::int64_t latentFrames, std::int64_t height,
                                        std::int64_t width, at::ScalarType dtype, const VaeTiling& tiling,
                                        bool wholeClip) {
  const double e = static_cast<double>(c10::elementSize(dtype));
  const std::int64_t s = config.spatialFactor();
  const bool tiled = tiling.enabled() && (tiling.tile < height || tiling.tile < width);
  const std::int64_t th = tiled ? std::min(tiling.tile, height) : height,
                     tw = tiled ? std::min(tiling.tile, width) : width;
  Walk walk;
  walkDecoder(config, static_cast<double>(th), static_cast<double>(tw), latentFrames > 1, walk);
  WanVaeDecodeMemory m;
  m.cacheBytes = static_cast<std::uint64_t>(walk.cache * e);
  m.activationBytes = static_cast<std::uint64_t>(walk.peak * e);
  const double pixels = static_cast<double>(height * s * width * s);
  const double frames = static_cast<double>(config.pixelFrames(latentFrames));
  const double chunk = static_cast<double>(latentFrames > 1 ? config.temporalFactor() : 1);
  if (tiled) {
    // Blended clip + weight map + one tile's mask and its float32 chunk.
    const double tilePixels = static_cast<double>(th * s * tw * s);
    m.clipBytes = static_cast<std::uint64_t>(4 * (3 * frames * pixels + pixels + tilePixels + 3 * chunk * tilePixels));
  } else {
    m.clipBytes = static_cast<std::uint64_t>(4 * 3 * (wholeClip ? frames + chunk : 2 * chunk) * pixels);
  }
  const double latent = static_cast<double>(config.zDim * latentFrames * height * width);
  m.inputBytes = static_cast<std::uint64_t>(latent * (4 + e));
  return m;
}

VaeTiling chooseWanVaeTiling(const WanVaeConfig& config, std::int64_t latentFrames, std::int64_t height,
                             std::int64_t width, at::ScalarType dtype, std::uint64_t budgetBytes, bool wholeClip) {
  if (estimateWanVaeDecode(config, latentFrames, height, width, dtype, {}, wholeClip).totalBytes() <= budgetBytes)
    return {};
  const std::int64_t largest = std::max(height, width);
  const VaeTiling best{4, 2};
  for (std::int64_t tile = largest - 1; tile >= 4; --tile) {
    const VaeTiling candidate{tile, std::max<std::int64_t>(2, tile / 4)};
    if (estimateWanVaeDecode(config, latentFrames, height, width, dtype, candidate, wholeClip).totalBytes() <=
        budgetBytes)
      return candidate;
  }
  return best;
}

}  // namespace shotchain::models
