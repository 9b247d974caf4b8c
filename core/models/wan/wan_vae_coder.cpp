#include "models/wan/wan_vae_coder.h"

#include <ATen/ATen.h>

namespace shotchain::models::vae_detail {
namespace {

// F.normalize(x, dim=1) · √C · γ written into `out`, then SiLU, in the reference's operation order.
void normSiluInto(at::Tensor out, const at::Tensor& x, const Norm& norm, bool silu = true) {
  const std::array<std::int64_t, 1> channelDim{1};
  const at::Tensor denom = at::norm(x, 2, at::IntArrayRef(channelDim), true).clamp_min_(1e-12);
  at::div_out(out, x, denom);
  out.mul_(norm.scale).mul_(norm.gamma);
  if (silu) at::silu_(out);
}

// The input of a k3 causal conv: [2 cached (or zero) frames, body], body written by `fill`.
// The cache becomes the last two frames of that sequence.
template <typename Fill>
at::Tensor cachedInput(at::Tensor& cache, std::int64_t channels, const at::Tensor& like, Fill&& fill) {
  std::vector<std::int64_t> sizes = like.sizes().vec();
  const std::int64_t t = sizes[2];
  sizes[1] = channels;
  sizes[2] = t + 2;
  at::Tensor padded = at::empty(sizes, like.options());
  fill(padded.narrow(2, 2, t));
  at::Tensor head = padded.narrow(2, 0, 2);
  if (cache.defined())
    head.copy_(cache);
  else
    head.zero_();
  cache = padded.narrow(2, t, 2).clone();
  return padded;
}

// Out-of-place normSiluInto for the differentiable pass.
at::Tensor normSilu(const at::Tensor& x, const Norm& norm, bool silu = true) {
  const std::array<std::int64_t, 1> channelDim{1};
  const at::Tensor denom = at::norm(x, 2, at::IntArrayRef(channelDim), true).clamp_min(1e-12);
  const at::Tensor y = x / denom * norm.scale * norm.gamma;
  return silu ? at::silu(y) : y;
}

// Out-of-place cachedInput: [2 cached (or zero) frames, body]; the cache becomes its last two frames.
at::Tensor cachedInputGrad(at::Tensor& cache, const at::Tensor& body) {
  std::vector<std::int64_t> sizes = body.sizes().vec();
  sizes[2] = 2;
  const at::Tensor head = cache.defined() ? cache : at::zeros(sizes, body.options());
  at::Tensor padded = at::cat({head, body}, 2);
  cache = padded.narrow(2, padded.size(2) - 2, 2);
  return padded;
}

at::Tensor conv3(const at::Tensor& padded, const Conv& conv) {
  // Time already padded; k3 spatial convs pad 1, the (3,1,1) time convs 0.
  const std::int64_t ph = conv.weight.size(3) / 2, pw = conv.weight.size(4) / 2;
  return at::conv3d(padded, conv.weight, conv.bias, {1, 1, 1}, {0, ph, pw});
}

at::Tensor residual(const Block& b, at::Tensor x, Caches& caches) {
  const at::Tensor h = b.shortcut.weight.defined() ? at::conv3d(x, b.shortcut.weight, b.shortcut.bias) : x;
  if (caches.grad) {
    at::Tensor y = conv3(cachedInputGrad(caches.slot(b.slot1), normSilu(x, b.norm1)), b.conv1);
    y = conv3(cachedInputGrad(caches.slot(b.slot2), normSilu(y, b.norm2)), b.conv2);
    return y + h;
  }
  at::Tensor p =
      cachedInput(caches.slot(b.slot1), x.size(1), x, [&](at::Tensor body) { normSiluInto(body, x, b.norm1); });
  x.reset();
  at::Tensor y = conv3(p, b.conv1);
  p.reset();
  p = cachedInput(caches.slot(b.slot2), y.size(1), y, [&](at::Tensor body) { normSiluInto(body, y, b.norm2); });
  y.reset();
  y = conv3(p, b.conv2);
  p.reset();
  return y.add_(h);
}

// attention() for the differentiable pass, any batch size.
at::Tensor attentionGrad(const Block& b, const at::Tensor& x) {
  const std::int64_t batch = x.size(0), c = x.size(1), t = x.size(2), hh = x.size(3), ww = x.size(4);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c));
  std::vector<at::Tensor> frames;
  for (std::int64_t f = 0; f < t; ++f) {
    const at::Tensor xf = x.select(2, f);  // [B, C, h, w]
    const at::Tensor qkv = at::conv2d(normSilu(xf, b.attnNorm, false), b.qkv.weight, b.qkv.bias)
                               .view({batch, 3 * c, hh * ww})
                               .transpose(1, 2);  // [B, hw, 3C]
    const at::Tensor q = qkv.narrow(2, 0, c), k = qkv.narrow(2, c, c), v = qkv.narrow(2, 2 * c, c);
    const at::Tensor weights = at::softmax(at::matmul(q, k.transpose(1, 2)) * scale, -1);
    const at::Tensor attended = at::matmul(weights, v).transpose(1, 2).reshape({batch, c, hh, ww});
    frames.push_back(at::conv2d(attended, b.proj.weight, b.proj.bias) + xf);
  }
  return at::stack(frames, 2);
}

// Single-head self-attention over each frame's h·w positions (no caching).
at::Tensor attention(const Block& b, const at::Tensor& x) {
  const std::int64_t c = x.size(1), t = x.size(2), hh = x.size(3), ww = x.size(4);
  at::Tensor out = at::empty_like(x);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c));
  for (std::int64_t f = 0; f < t; ++f) {
    const at::Tensor xf = x.select(2, f);  // [1, C, h, w]
    at::Tensor normed = at::empty(xf.sizes(), xf.options());
    normSiluInto(normed, xf, b.attnNorm, false);
    const at::Tensor qkv = at::conv2d(normed, b.qkv.weight, b.qkv.bias).view({3 * c, hh * ww}).t().contiguous();
    normed.reset();
    const at::Tensor q = qkv.narrow(1, 0, c), k = qkv.narrow(1, c, c), v = qkv.narrow(1, 2 * c, c);
    const at::Tensor weights = at::softmax(at::matmul(q, k.t()).mul_(scale), -1);
    const at::Tensor attended = at::matmul(weights, v).t().reshape({1, c, hh, ww});
    out.select(2, f).copy_(at::conv2d(attended, b.proj.weight, b.proj.bias).add_(xf));
  }
  return out;
}

// Nearest ×2 then the 3×3 conv, frame by frame (the ×4-sized upsampled frame never exists for a whole chunk).
at::Tensor upsampleSpatial(const Block& b, const at::Tensor& x, bool grad) {
  const std::int64_t t = x.size(2), hh = 2 * x.size(3), ww = 2 * x.size(4);
  if (grad) {
    std::vector<at::Tensor> frames;
    for (std::int64_t f = 0; f < t; ++f) {
      const std::array<std::int64_t, 2> size{hh, ww};
      const at::Tensor up = at::upsample_nearest2d(x.select(2, f), at::IntArrayRef(size));
      frames.push_back(at::conv2d(up, b.spatial.weight, b.spatial.bias, {1, 1}, {1, 1}));
    }
    return at::stack(frames, 2);
  }
  at::Tensor out = at::empty({x.size(0), b.spatial.weight.size(0), t, hh, ww}, x.options());
  for (std::int64_t f = 0; f < t; ++f) {
    const std::array<std::int64_t, 2> size{hh, ww};
    at::Tensor up = at::upsample_nearest2d(x.select(2, f), at::IntArrayRef(size));
    out.select(2, f).copy_(at::conv2d(up, b.spatial.weight, b.spatial.bias, {1, 1}, {1, 1}));
  }
  return out;
}

at::Tensor upsample(const Block& b, at::Tensor x, Caches& caches) {
  if (b.kind == Kind::Upsample3d && !caches.first(b.flag)) {
    const std::int64_t c = x.size(1), t = x.size(2);
    at::Tensor p = caches.grad ? cachedInputGrad(caches.slot(b.timeSlot), x)
                               : cachedInput(caches.slot(b.timeSlot), c, x, [&](at::Tensor body) { body.copy_(x); });
    const auto sizes = x.sizes().vec();
    x.reset();
    at::Tensor y = conv3(p, b.time);  // [B, 2C, t, h, w]
    p.reset();
    // Output channels [0, C) become frame 2i, [C, 2C) frame 2i+1.
    x = y.view({sizes[0], 2, c, t, sizes[3], sizes[4]})
            .permute({0, 2, 3, 1, 4, 5})
            .reshape({sizes[0], c, 2 * t, sizes[3], sizes[4]});
  }
  return upsampleSpatial(b, x, caches.grad);
}

at::Tensor downsample(const Block& b, at::Tensor x, Caches& caches) {
  const std::int64_t t = x.size(2);
  std::vector<at::Tensor> frames;
  for (std::int64_t f = 0; f < t; ++f)
    frames.push_back(
        at::conv2d(at::constant_pad_nd(x.select(2, f), {0, 1, 0, 1}), b.spatial.weight, b.spatial.bias, {2, 2}));
  x = at::stack(frames, 2);
  frames.clear();
  if (b.kind != Kind::Downsample3d) return x;
  at::Tensor& last = caches.slot(b.timeSlot);
  if (caches.first(b.flag)) {  // first chunk: passes unchanged
    last = x.narrow(2, t - 1, 1).clone();
    return x;
  }
  at::Tensor input = at::cat({last, x}, 2);
  last = x.narrow(2, t - 1, 1).clone();
  x.reset();
  return at::conv3d(input, b.time.weight, b.time.bias, {2, 1, 1});
}

// AvgDown3D (Wan 2.2): time front-padded to a multiple of factorT, then each output channel the mean of
// its group of in·factorT·factorS²/out values, taken in (channel, t, row, column) order.
at::Tensor averageDown(const Block& b, at::Tensor x) {
  const std::int64_t ft = b.factorT, fs = b.factorS, factor = ft * fs * fs;
  const std::int64_t padT = (ft - x.size(2) % ft) % ft;
  if (padT > 0) x = at::constant_pad_nd(x, {0, 0, 0, 0, padT, 0});
  const std::int64_t batch = x.size(0), c = x.size(1), t = x.size(2) / ft, h = x.size(3) / fs, w = x.size(4) / fs;
  return x.view({batch, c, t, ft, h, fs, w, fs})
      .permute({0, 1, 3, 5, 7, 2, 4, 6})
      .reshape({batch, b.out, c * factor / b.out, t, h, w})
      .mean(2);
}

// DupUp3D (Wan 2.2): each channel repeated, the copies spread over factorT frames and factorS² pixels;
// the first chunk drops its first factorT − 1 frames (the causal first frame stays one frame).
at::Tensor duplicateUp(const Block& b, const at::Tensor& x, bool firstChunk) {
  const std::int64_t ft = b.factorT, fs = b.factorS, factor = ft * fs * fs;
  const std::int64_t batch = x.size(0), t = x.size(2), h = x.size(3), w = x.size(4);
  at::Tensor y = x.repeat_interleave(b.out * factor / b.in, 1)
                     .view({batch, b.out, ft, fs, fs, t, h, w})
                     .permute({0, 1, 5, 2, 6, 3, 7, 4})
                     .reshape({batch, b.out, t * ft, h * fs, w * fs});
  return firstChunk && ft > 1 ? y.narrow(2, ft - 1, t * ft - (ft - 1)) : y;
}

at::Tensor runCoderGrad(const Coder& coder, const at::Tensor& input, Caches& caches) {
  at::Tensor x = conv3(cachedInputGrad(caches.slot(coder.conv1Slot), input), coder.conv1);
  at::Tensor stageInput;
  for (const Block& b : coder.blocks) {
    switch (b.kind) {
      case Kind::Residual:
        x = residual(b, x, caches);
        break;
      case Kind::Attention:
        x = attentionGrad(b, x);
        break;
      case Kind::Upsample2d:
      case Kind::Upsample3d:
        x = upsample(b, x, caches);
        break;
      case Kind::Downsample2d:
      case Kind::Downsample3d:
        x = downsample(b, x, caches);
        break;
      case Kind::StageInput:
        stageInput = x;
        break;
      case Kind::AvgDownShortcut:
        x = x + averageDown(b, stageInput);
        break;
      case Kind::DupUpShortcut:
        x = x + duplicateUp(b, stageInput, caches.first(b.flag));
        break;
    }
  }
  return conv3(cachedInputGrad(caches.slot(coder.headSlot), normSilu(x, coder.headNorm)), coder.head);
}

}  // namespace

at::Tensor runCoder(const Coder& coder, at::Tensor x, Caches& caches) {
  if (caches.grad) return runCoderGrad(coder, x, caches);
  at::Tensor p = cachedInput(caches.slot(coder.conv1Slot), x.size(1), x, [&](at::Tensor body) { body.copy_(x); });
  x = conv3(p, coder.conv1);
  p.reset();
  at::Tensor stageInput;  // blocks never write into their input, so holding it is safe
  for (const Block& b : coder.blocks) {
    switch (b.kind) {
      case Kind::Residual:
        x = residual(b, std::move(x), caches);
        break;
      case Kind::Attention:
        x = attention(b, x);
        break;
      case Kind::Upsample2d:
      case Kind::Upsample3d:
        x = upsample(b, std::move(x), caches);
        break;
      case Kind::Downsample2d:
      case Kind::Downsample3d:
        x = downsample(b, std::move(x), caches);
        break;
      case Kind::StageInput:
        stageInput = x;
        break;
      case Kind::AvgDownShortcut:
        x.add_(averageDown(b, std::move(stageInput)));
        break;
      case Kind::DupUpShortcut:
        x.add_(duplicateUp(b, stageInput, caches.first(b.flag)));
        stageInput.reset();
        break;
    }
  }
  p = cachedInput(caches.slot(coder.headSlot), x.size(1), x,
                  [&](at::Tensor body) { normSiluInto(body, x, coder.headNorm); });
  x.reset();
  return conv3(p, coder.head);
}

}  // namespace shotchain::models::vae_detail
