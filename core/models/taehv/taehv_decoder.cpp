#include "models/taehv/taehv_decoder.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/detection_problems.h"
#include "models/taehv/taehv_layers.h"

namespace shotchain::models {
namespace {

using taehv::decoderTensor;

struct Conv {
  at::Tensor weight, bias;  // bias undefined: none
  at::Tensor operator()(const at::Tensor& x) const {
    const std::int64_t padding = weight.size(2) / 2;
    return at::conv2d(x, weight, bias, {1, 1}, {padding, padding});
  }
};

struct MemBlock {
  Conv conv0, conv1, conv2;  // conv0 takes [x, past] on channels
};

struct Stage {
  std::array<MemBlock, taehv::kMemBlocksPerStage> blocks;
  at::Tensor grow;  // TGrow 1×1 weights [width·stride, width, 1, 1]
  std::int64_t growStride = 1;
  bool upsample = true;
  Conv conv;
};

std::string describe(const TaehvConfig& c) {
  return "a TAEHV decoder (" + c.variant() + ": " + std::to_string(c.latentChannels) + " latent channels, patch " +
         std::to_string(c.patchSize) + ", widths " + std::to_string(c.widths[0]) + "/" + std::to_string(c.widths[1]) +
         "/" + std::to_string(c.widths[2]) + "/" + std::to_string(c.widths[3]) + ")";
}

}  // namespace

struct TaehvDecoder::Impl {
  TaehvConfig config;
  at::ScalarType compute = at::kFloat;
  at::Device device = at::kCPU;
  std::uint64_t bytes = 0;
  Conv first, output;
  std::array<Stage, taehv::kStages> stages;

  at::Tensor act(at::Tensor x) const {
    return config.activation == TaehvActivation::Relu ? at::relu_(x) : at::leaky_relu_(x, 0.2);
  }

  // x [B·T, C, H, W], frames of one batch item consecutive. Each frame's past is the block's input at the previous
  // frame: `carry` (the last input frames of the previous chunk, [B, C, H, W]) or zeros for the first frame.
  at::Tensor memBlock(const MemBlock& block, const at::Tensor& x, std::int64_t batch, at::Tensor* carry) const {
    const std::int64_t frames = x.size(0) / batch;
    at::Tensor past = at::empty_like(x);
    std::vector<at::Tensor> last;
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::int64_t start = b * frames;
      if (carry != nullptr && carry->defined())
        past.narrow(0, start, 1).copy_(carry->narrow(0, b, 1));
      else
        past.narrow(0, start, 1).zero_();
      past.narrow(0, start + 1, frames - 1).copy_(x.narrow(0, start, frames - 1));
      last.push_back(x.narrow(0, start + frames - 1, 1));
    }
    if (carry != nullptr) *carry = at::cat(last, 0);
    at::Tensor h = act(block.conv0(at::cat({x, past}, 1)));
    past.reset();
    h = block.conv2(act(block.conv1(h)));
    return act(h.add_(x));
  }

  // TGrow: a 1×1 convolution to stride·C channels whose channel groups become consecutive frames
  // ([N, s·C, H, W] → [N·s, C, H, W] as a reshape of the NCHW tensor), kept channels-last.
  at::Tensor grow(const Stage& stage, const at::Tensor& x) const {
    const at::Tensor y = at::conv2d(x, stage.grow);
    if (stage.growStride == 1) return y;
    const std::int64_t n = x.size(0), c = x.size(1), s = stage.growStride;
    at::Tensor frames = at::empty({n * s, c, x.size(2), x.size(3)}, y.options(), at::MemoryFormat::ChannelsLast);
    frames.view({n, s, c, x.size(2), x.size(3)}).copy_(y.unflatten(1, {s, c}));
    return frames;
  }

  // x [B·T, latentChannels, h, w] → [B·T·timeUpscale, 3·p², H/p, W/p] (channels-last), before the pixel shuffle and
  // the clamp.
  at::Tensor run(const at::Tensor& latents, std::int64_t batch, std::vector<at::Tensor>* carries) const {
    at::Tensor x = latents.contiguous(at::MemoryFormat::ChannelsLast);
    x = act(first(at::tanh(x / 3).mul_(3)));
    std::size_t memory = 0;
    for (const Stage& stage : stages) {
      for (const MemBlock& block : stage.blocks)
        x = memBlock(block, x, batch, carries != nullptr ? &(*carries)[memory++] : nullptr);
      if (stage.upsample) x = at::upsample_nearest2d(x, {2 * x.size(2), 2 * x.size(3)});
      x = stage.conv(grow(stage, x));
    }
    return output(act(x));
  }

  void resolve(std::map<std::string, at::Tensor>& p) {
    for (const auto& [name, tensor] : p) bytes += tensor.nbytes();
    auto conv = [&](int layer, const std::string& prefix, bool withBias) {
      return Conv{p.at(decoderTensor(layer, prefix + "weight")).contiguous(at::MemoryFormat::ChannelsLast),
                  withBias ? p.at(decoderTensor(layer, prefix + "bias")) : at::Tensor()};
    };
    first = conv(taehv::kFirstConv, "", true);
    output = conv(taehv::kOutputConv, "", true);
    for (int s = 0; s < taehv::kStages; ++s) {
      const auto index = static_cast<std::size_t>(s);
      Stage& stage = stages[index];
      for (int b = 0; b < taehv::kMemBlocksPerStage; ++b) {
        const int layer = taehv::memBlockLayer(s, b);
        stage.blocks[static_cast<std::size_t>(b)] = {conv(layer, "conv.0.", true), conv(layer, "conv.2.", true),
                                                     conv(layer, "conv.4.", true)};
      }
      stage.growStride = config.timeStrides[index];
      const at::Tensor weight = p.at(decoderTensor(taehv::tGrowLayer(s), "conv.weight"));
      const std::int64_t width = config.widths[index];
      // A stride the options turned off keeps the last-timestep rows, as the official patch_tgrow_layers does.
      stage.grow = weight.narrow(0, weight.size(0) - width * stage.growStride, width * stage.growStride)
                       .contiguous(at::MemoryFormat::ChannelsLast);
      stage.upsample = config.spaceUpscale[index];
      stage.conv = conv(taehv::stageConvLayer(s), "", false);
    }
  }
};

TaehvDecoder::TaehvDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TaehvDecoder::~TaehvDecoder() = default;
TaehvDecoder::TaehvDecoder(TaehvDecoder&&) noexcept = default;
TaehvDecoder& TaehvDecoder::operator=(TaehvDecoder&&) noexcept = default;

const TaehvConfig& TaehvDecoder::config() const { return impl_->config; }
at::ScalarType TaehvDecoder::computeDtype() const { return impl_->compute; }
at::Device TaehvDecoder::device() const { return impl_->device; }
std::uint64_t TaehvDecoder::weightBytes() const { return impl_->bytes; }

TaehvDecoder TaehvDecoder::load(const io::WeightSet& weights, const TaehvLoadOptions& options) {
  const TaehvDetection detection = detectTaehv(weights);
  requireNoDetectionProblems(weights.label(), "a TAEHV decoder", detection.problems);
  if (!at::isFloatingType(options.computeDtype))
    throw std::invalid_argument("TaehvDecoder::load: the compute dtype must be a floating-point type");
  const TaehvConfig& file = detection.config;
  auto impl = std::make_unique<Impl>();
  impl->compute = options.computeDtype;
  impl->device = options.device;
  TaehvConfig& c = impl->config;
  c = file;
  for (std::size_t s = 0; s < c.timeStrides.size(); ++s)
    if (!options.timeUpscale[s]) c.timeStrides[s] = 1;
  c.spaceUpscale = options.spaceUpscale;
  if (options.activation) c.activation = *options.activation;

  io::StrictWeightLoader loader(weights, describe(file));
  const at::ScalarType as = options.computeDtype;
  auto conv = [&](int layer, const std::string& prefix, std::int64_t out, std::int64_t in, std::int64_t kernel,
                  bool withBias) {
    loader.require(decoderTensor(layer, prefix + "weight"), {out, in, kernel, kernel}, as);
    if (withBias) loader.require(decoderTensor(layer, prefix + "bias"), {out}, as);
  };
  conv(taehv::kFirstConv, "", c.widths[0], c.latentChannels, 3, true);
  for (int s = 0; s < taehv::kStages; ++s) {
    const auto index = static_cast<std::size_t>(s);
    const std::int64_t width = c.widths[index];
    for (int b = 0; b < taehv::kMemBlocksPerStage; ++b) {
      const int layer = taehv::memBlockLayer(s, b);
      conv(layer, "conv.0.", width, 2 * width, 3, true);
      conv(layer, "conv.2.", width, width, 3, true);
      conv(layer, "conv.4.", width, width, 3, true);
    }
    conv(taehv::tGrowLayer(s), "conv.", width * file.timeStrides[index], width, 1, false);
    conv(taehv::stageConvLayer(s), "", c.widths[index + 1], width, 3, false);
  }
  conv(taehv::kOutputConv, "", 3 * c.patchSize * c.patchSize, c.widths[3], 3, true);
  loader.tolerate([](const std::string& stored) { return stored.starts_with("encoder."); });
  std::map<std::string, at::Tensor> params = loader.finish(options.device);
  impl->resolve(params);
  return TaehvDecoder(std::move(impl));
}

at::Tensor TaehvDecoder::decode(const at::Tensor& latents, std::int64_t latentFramesPerChunk) const {
  const Impl& m = *impl_;
  const TaehvConfig& c = m.config;
  const bool batched = latents.dim() == 5;
  if ((latents.dim() != 4 && !batched) || latents.size(batched ? 1 : 0) != c.latentChannels ||
      !at::isFloatingType(latents.scalar_type()))
    throw std::invalid_argument("TaehvDecoder::decode: latents must be floating point [" +
                                std::to_string(c.latentChannels) + ", T, h, w] or [B, " +
                                std::to_string(c.latentChannels) + ", T, h, w]");
  const at::NoGradGuard noGrad;
  const at::Tensor z = (batched ? latents : latents.unsqueeze(0)).to(m.device, m.compute);  // [B, C, T, h, w]
  const std::int64_t batch = z.size(0), frames = z.size(2), h = z.size(3), w = z.size(4);
  const std::int64_t chunk = latentFramesPerChunk > 0 ? std::min(latentFramesPerChunk, frames) : frames;
  const std::int64_t scale = c.spatialUpscale(), p = c.patchSize, grow = c.timeUpscale();
  at::Tensor result = at::empty({batch, c.outputFrames(frames), 3, h * scale, w * scale},
                                at::TensorOptions().dtype(at::kFloat).device(m.device));
  std::vector<at::Tensor> carries(taehv::kStages * taehv::kMemBlocksPerStage);
  std::int64_t written = 0, toTrim = c.framesToTrim();
  for (std::int64_t start = 0; start < frames; start += chunk) {
    const std::int64_t n = std::min(chunk, frames - start);
    const at::Tensor x =
        z.narrow(2, start, n).permute({0, 2, 1, 3, 4}).reshape({batch * n, c.latentChannels, h, w});  // NTCHW
    at::Tensor y = m.run(x, batch, chunk < frames ? &carries : nullptr);
    y = y.view({batch, n * grow, 3 * p * p, y.size(2), y.size(3)}).to(at::kFloat);
    if (p > 1) y = at::pixel_shuffle(y, p);
    const std::int64_t drop = std::min(toTrim, y.size(1));
    toTrim -= drop;
    result.narrow(1, written, y.size(1) - drop).copy_(y.narrow(1, drop, y.size(1) - drop).clamp_(0, 1));
    written += y.size(1) - drop;
  }
  return batched ? result : result.squeeze(0);
}

}  // namespace shotchain::models
