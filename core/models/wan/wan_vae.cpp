#include "models/wan/wan_vae.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <nlohmann/json.hpp>

#include "io/safetensors_header.h"
#include "io/strict_json.h"
#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/detection_problems.h"
#include "models/wan/wan_vae_coder.h"
#include "models/wan/wan_vae_memory.h"

namespace shotchain::models {
namespace {

using namespace vae_detail;
using Kind = WanVaeBlock::Kind;

// Tile starts along one axis: tiles of `tile` with at least `overlap` shared, the last flush with the end.
std::vector<std::int64_t> tileStarts(std::int64_t length, std::int64_t tile, std::int64_t overlap) {
  if (length <= tile) return {0};
  const std::int64_t stride = std::max<std::int64_t>(1, tile - overlap);
  std::vector<std::int64_t> starts;
  for (std::int64_t s = 0;; s += stride) {
    if (s + tile >= length) {
      starts.push_back(length - tile);
      break;
    }
    starts.push_back(s);
  }
  return starts;
}

// Linear ramp weights (0, 1] over `ramp` pixels at the sides that border another tile.
at::Tensor ramp1d(std::int64_t length, std::int64_t ramp, bool rampStart, bool rampEnd,
                  const at::TensorOptions& options) {
  at::Tensor w = at::ones({length}, options);
  ramp = std::min(ramp, length);
  if (ramp <= 0) return w;
  const at::Tensor up = at::arange(1, ramp + 1, options).div_(static_cast<double>(ramp + 1));
  if (rampStart) w.narrow(0, 0, ramp).mul_(up);
  if (rampEnd) w.narrow(0, length - ramp, ramp).mul_(up.flip({0}));
  return w;
}

// Wan 2.2's 2×2 patchify: pixel (row 2i+q, column 2j+r) of channel c becomes channel c·4 + r·2 + q
// (the column offset is the slower one), and its inverse on the decoder's output. p = 1: unchanged.
at::Tensor patchify(const at::Tensor& x, std::int64_t p) {
  if (p == 1) return x;
  const std::int64_t b = x.size(0), c = x.size(1), f = x.size(2), h = x.size(3) / p, w = x.size(4) / p;
  return x.view({b, c, f, h, p, w, p}).permute({0, 1, 6, 4, 2, 3, 5}).reshape({b, c * p * p, f, h, w});
}

at::Tensor unpatchify(const at::Tensor& x, std::int64_t p) {
  if (p == 1) return x;
  const std::int64_t b = x.size(0), c = x.size(1) / (p * p), f = x.size(2), h = x.size(3), w = x.size(4);
  return x.view({b, c, p, p, f, h, w}).permute({0, 1, 4, 5, 3, 6, 2}).reshape({b, c, f, h * p, w * p});
}

// A per-channel latent statistic from the metadata: a JSON array of zDim numbers (std > 0), or
// empty when the key is absent.
std::vector<double> latentStatistic(const io::WeightSet& weights, const char* key, std::int64_t zDim) {
  const auto found = weights.metadata().find(key);
  if (found == weights.metadata().end()) return {};
  std::vector<double> values;
  try {
    const nlohmann::json parsed = io::parseJsonChecked<nlohmann::json>(found->second, io::kMaxJsonDepth);
    if (!parsed.is_array()) throw std::runtime_error("not an array");
    for (const auto& v : parsed) values.push_back(v.get<double>());
  } catch (const std::exception& error) {
    throw std::runtime_error(weights.label() + ": metadata \"" + key + "\" is not a JSON array of numbers (" +
                             error.what() + ")");
  }
  if (static_cast<std::int64_t>(values.size()) != zDim)
    throw std::runtime_error(weights.label() + ": metadata \"" + key + "\" has " + std::to_string(values.size()) +
                             " values but z_dim is " + std::to_string(zDim));
  for (double v : values)
    if (!std::isfinite(v) || (std::string_view(key) == kWanVaeLatentStdKey && !(v > 0)))
      throw std::runtime_error(weights.label() + ": metadata \"" + key + "\" has a bad value " + std::to_string(v));
  return values;
}

}  // namespace

const char* const kWanVaeLatentMeanKey = "latents_mean";
const char* const kWanVaeLatentStdKey = "latents_std";

struct WanVae::Impl {
  WanVaeConfig config;
  at::ScalarType compute = at::kFloat;
  at::Device device = at::kCPU;
  std::map<std::string, at::Tensor> params;
  Coder encoder, decoder;
  Conv quant, postQuant;    // top-level conv1 (2z→2z) and conv2 (z→z)
  at::Tensor mean, invStd;  // [1, z, 1, 1, 1] float32; identity for z ≠ 16 without statistics
  // Per-channel latent statistics of this VAE family (file metadata); empty = Wan 2.1's for z = 16.
  std::vector<double> latentMean, latentStd;

  const at::Tensor& get(const std::string& name) const { return params.at(name); }
  Conv conv(const std::string& name) const { return {get(name + ".weight"), get(name + ".bias")}; }
  Norm norm(const std::string& name, bool fiveD) const {
    const at::Tensor& g = get(name);
    return {fiveD ? g.view({1, g.size(0), 1, 1, 1}) : g.view({1, g.size(0), 1, 1}),
            std::sqrt(static_cast<double>(g.size(0)))};
  }

  void build(Coder& coder, const std::vector<WanVaeBlock>& layout, const std::string& root) {
    coder = Coder{};
    coder.conv1 = conv(root + "conv1");
    coder.conv1Slot = coder.slots++;
    for (const WanVaeBlock& spec : layout) {
      vae_detail::Block b;
      b.kind = spec.kind;
      const std::string& p = spec.prefix;
      switch (spec.kind) {
        case Kind::Residual:
          b.norm1 = norm(p + "residual.0.gamma", true);
          b.conv1 = conv(p + "residual.2");
          b.norm2 = norm(p + "residual.3.gamma", true);
          b.conv2 = conv(p + "residual.6");
          if (spec.in != spec.out) b.shortcut = conv(p + "shortcut");
          b.slot1 = coder.slots++;
          b.slot2 = coder.slots++;
          break;
        case Kind::Attention:
          b.attnNorm = norm(p + "norm.gamma", false);
          b.qkv = conv(p + "to_qkv");
          b.proj = conv(p + "proj");
          break;
        case Kind::Upsample2d:
        case Kind::Downsample2d:
          b.spatial = conv(p + "resample.1");
          break;
        case Kind::Upsample3d:
        case Kind::Downsample3d:
          b.spatial = conv(p + "resample.1");
          b.time = conv(p + "time_conv");
          b.timeSlot = coder.slots++;
          b.flag = coder.flags++;
          break;
        case Kind::DupUpShortcut:
          b.flag = coder.flags++;
          [[fallthrough]];
        case Kind::AvgDownShortcut:
        case Kind::StageInput:
          b.in = spec.in;
          b.out = spec.out;
          b.factorT = spec.factorT;
          b.factorS = spec.factorS;
          break;
      }
      coder.blocks.push_back(std::move(b));
    }
    coder.headNorm = norm(root + "head.0.gamma", true);
    coder.head = conv(root + "head.2");
    coder.headSlot = coder.slots++;
  }

  void resolve() {
    build(encoder, wanVaeEncoderBlocks(config), "encoder.");
    build(decoder, wanVaeDecoderBlocks(config), "decoder.");
    quant = conv("conv1");
    postQuant = conv("conv2");
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
    const auto z = static_cast<std::size_t>(config.zDim);
    // As the reference wrappers: float32 tensors of the Python floats, scale = 1/std in float32.
    auto use = [&](const double* m, const double* s) {
      const auto f64 = at::TensorOptions().dtype(at::kDouble);
      const std::vector<std::int64_t> shape{1, config.zDim, 1, 1, 1};
      mean = at::tensor(std::vector<double>(m, m + z), f64).to(f32).view(shape);
      invStd = at::reciprocal(at::tensor(std::vector<double>(s, s + z), f64).to(f32)).view(shape);
    };
    if (latentMean.size() == z && latentStd.size() == z) {
      use(latentMean.data(), latentStd.data());
    } else if (config.generation == 22 && z == kWan22VaeLatentMean.size()) {
      use(kWan22VaeLatentMean.data(), kWan22VaeLatentStd.data());
    } else if (config.generation == 21 && z == kWanVaeLatentMean.size()) {
      use(kWanVaeLatentMean.data(), kWanVaeLatentStd.data());
    } else {
      mean = at::zeros({1, config.zDim, 1, 1, 1}, f32);
      invStd = at::ones({1, config.zDim, 1, 1, 1}, f32);
    }
  }

  // latent [z, T', h, w] or [1, z, T', h, w] → conv2 input space [1, z, T', h, w] in the compute dtype.
  at::Tensor prepareLatent(const at::Tensor& latent, bool normalised) const {
    at::Tensor z = latent.dim() == 4 ? latent.unsqueeze(0) : latent;
    if (z.dim() != 5 || z.size(0) != 1 || z.size(1) != config.zDim || z.size(2) < 1)
      throw std::invalid_argument("WanVae::decode: latent must be [" + std::to_string(config.zDim) +
                                  ", T, h, w] (or with a batch of 1), got " + c10::str(latent.sizes()));
    z = z.to(device, at::kFloat);
    if (normalised) z = z / invStd + mean;
    return at::conv3d(z.to(compute), postQuant.weight, postQuant.bias);
  }

  at::Tensor finish(const at::Tensor& frames, bool clamp) const {
    at::Tensor out = unpatchify(frames, config.patch()).squeeze(0).to(at::kFloat);
    if (clamp) out = out.clamp(-1.0, 1.0);
    return out;
  }
};

struct WanVaeDecodeStream::State {
  std::shared_ptr<const WanVae::Impl> impl;
  VaeDecodeOptions options;
  Caches caches;
  std::int64_t latentIn = 0, pixelOut = 0;
  State(std::shared_ptr<const WanVae::Impl> i, const VaeDecodeOptions& o)
      : impl(std::move(i)), options(o), caches(impl->decoder) {}
};

WanVaeDecodeStream::WanVaeDecodeStream(std::unique_ptr<State> state) : state_(std::move(state)) {}
WanVaeDecodeStream::~WanVaeDecodeStream() = default;
WanVaeDecodeStream::WanVaeDecodeStream(WanVaeDecodeStream&&) noexcept = default;
WanVaeDecodeStream& WanVaeDecodeStream::operator=(WanVaeDecodeStream&&) noexcept = default;

at::Tensor WanVaeDecodeStream::push(const at::Tensor& latentFrame) {
  at::NoGradGuard noGrad;
  State& s = *state_;
  at::Tensor z = latentFrame.dim() == 3 ? latentFrame.unsqueeze(1) : latentFrame;
  if (z.dim() == 4 && z.size(1) != 1)
    throw std::invalid_argument("WanVaeDecodeStream::push: one latent frame at a time, got " +
                                c10::str(latentFrame.sizes()));
  at::Tensor x = s.impl->prepareLatent(z, s.options.normalised);
  at::Tensor frames = s.impl->finish(runCoder(s.impl->decoder, std::move(x), s.caches), s.options.clamp);
  ++s.latentIn;
  s.pixelOut += frames.size(1);
  return frames;
}

std::int64_t WanVaeDecodeStream::latentFramesIn() const { return state_->latentIn; }
std::int64_t WanVaeDecodeStream::pixelFramesOut() const { return state_->pixelOut; }

void WanVaeDecodeStream::reset() {
  state_->caches = Caches(state_->impl->decoder);
  state_->latentIn = state_->pixelOut = 0;
}

WanVae::WanVae(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
WanVae::~WanVae() = default;
WanVae::WanVae(WanVae&&) noexcept = default;
WanVae& WanVae::operator=(WanVae&&) noexcept = default;

const WanVaeConfig& WanVae::config() const { return impl_->config; }
at::ScalarType WanVae::computeDtype() const { return impl_->compute; }
VaeGeometry WanVae::geometry() const {
  const WanVaeConfig& c = impl_->config;
  return {c.zDim, c.temporalFactor(), c.spatialFactor()};
}

at::Device WanVae::device() const { return impl_->device; }

std::uint64_t WanVae::weightBytes() const {
  std::uint64_t total = 0;
  for (const auto& [name, tensor] : impl_->params) total += static_cast<std::uint64_t>(tensor.nbytes());
  return total;
}

std::vector<std::pair<std::string, at::Tensor>> WanVae::namedParameters() const {
  return {impl_->params.begin(), impl_->params.end()};
}

std::vector<double> WanVae::latentMean() const {
  const at::Tensor m = impl_->mean.to(at::kCPU, at::kDouble).reshape({-1}).contiguous();
  return {m.data_ptr<double>(), m.data_ptr<double>() + m.numel()};
}

std::vector<double> WanVae::latentStd() const {
  const at::Tensor s = impl_->invStd.to(at::kCPU, at::kDouble).reciprocal().reshape({-1}).contiguous();
  return {s.data_ptr<double>(), s.data_ptr<double>() + s.numel()};
}

void WanVae::setLatentStatistics(const std::vector<double>& mean, const std::vector<double>& deviation) {
  const auto z = static_cast<std::size_t>(impl_->config.zDim);
  if (mean.size() != z || deviation.size() != z)
    throw std::invalid_argument("WanVae::setLatentStatistics: need " + std::to_string(z) + " means and deviations");
  auto impl = std::make_shared<Impl>(*impl_);
  impl->latentMean = mean;
  impl->latentStd = deviation;
  impl->resolve();
  impl_ = std::move(impl);
}

void WanVae::setTrainable(bool trainable) {
  auto impl = std::make_shared<Impl>(*impl_);
  for (auto& [name, tensor] : impl->params) tensor.requires_grad_(trainable);
  impl->resolve();  // the norm views are taken again, now tracking the parameters
  impl_ = std::move(impl);
}

WanVaeMoments WanVae::encodeMoments(const at::Tensor& video) const {
  const Impl& m = *impl_;
  const WanVaeConfig& c = m.config;
  if (video.dim() != 5 || video.size(1) != 3)
    throw std::invalid_argument("WanVae::encodeMoments: video must be [B, 3, T, H, W], got " + c10::str(video.sizes()));
  const std::int64_t frames = video.size(2), factor = c.temporalFactor();
  (void)c.latentFrames(frames);
  const at::Tensor x = patchify(video.to(m.device, m.compute), c.patch());
  Caches caches(m.encoder, true);
  std::vector<at::Tensor> chunks;
  for (std::int64_t start = 0; start < frames; start += start == 0 ? 1 : factor)
    chunks.push_back(runCoder(m.encoder, x.narrow(2, start, start == 0 ? 1 : factor), caches));
  const at::Tensor moments = at::conv3d(at::cat(chunks, 2), m.quant.weight, m.quant.bias).to(at::kFloat);
  return {moments.narrow(1, 0, c.zDim), moments.narrow(1, c.zDim, c.zDim)};
}

at::Tensor WanVae::decodeRaw(const at::Tensor& mu) const {
  const Impl& m = *impl_;
  if (mu.dim() != 5 || mu.size(1) != m.config.zDim)
    throw std::invalid_argument("WanVae::decodeRaw: latent must be [B, " + std::to_string(m.config.zDim) +
                                ", T, h, w], got " + c10::str(mu.sizes()));
  const at::Tensor x = at::conv3d(mu.to(m.device, m.compute), m.postQuant.weight, m.postQuant.bias);
  Caches caches(m.decoder, true);
  std::vector<at::Tensor> chunks;
  for (std::int64_t i = 0; i < x.size(2); ++i) chunks.push_back(runCoder(m.decoder, x.narrow(2, i, 1), caches));
  return unpatchify(at::cat(chunks, 2), m.config.patch()).to(at::kFloat);
}

WanVae WanVae::load(const io::WeightSet& weights, const WanVaeLoadOptions& options) {
  const WanVaeDetection detection = detectWanVaeConfig(weights);
  requireNoDetectionProblems(weights.label(), "a Wan VAE", detection.problems);
  return load(weights, detection.config, options);
}

WanVae WanVae::load(const io::WeightSet& weights, const WanVaeConfig& config, const WanVaeLoadOptions& options) {
  config.check();
  auto impl = std::make_shared<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->compute = options.computeDtype.value_or(at::kFloat);
  io::StrictWeightLoader loader(weights, "a Wan VAE with config " + config.toJson());
  for (const WanVaeParamSpec& spec : wanVaeParameterSpecs(config)) loader.require(spec.name, spec.shape, impl->compute);
  impl->params = loader.finish(options.device);
  impl->latentMean = latentStatistic(weights, kWanVaeLatentMeanKey, config.zDim);
  impl->latentStd = latentStatistic(weights, kWanVaeLatentStdKey, config.zDim);
  if (impl->latentMean.empty() != impl->latentStd.empty())
    throw std::runtime_error(weights.label() + ": metadata has only one of \"" + kWanVaeLatentMeanKey + "\" and \"" +
                             kWanVaeLatentStdKey + "\"");
  impl->resolve();
  return WanVae(std::move(impl));
}

WanVae WanVae::random(const WanVaeConfig& config, std::uint64_t seed, const WanVaeLoadOptions& options) {
  config.check();
  auto impl = std::make_shared<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->compute = options.computeDtype.value_or(at::kFloat);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  for (const WanVaeParamSpec& spec : wanVaeParameterSpecs(config)) {
    at::Tensor value = at::randn(spec.shape, generator, at::TensorOptions().dtype(at::kFloat));
    if (spec.name.ends_with(".gamma")) {
      value.mul_(0.1).add_(1.0);
    } else if (spec.name.ends_with(".bias")) {
      value.mul_(0.05);
    } else {
      std::int64_t fanIn = 1;
      for (std::size_t i = 1; i < spec.shape.size(); ++i) fanIn *= spec.shape[i];
      value.div_(std::sqrt(static_cast<double>(fanIn)));
      if (spec.name == "decoder.head.2.weight") value.mul_(0.5);
    }
    impl->params[spec.name] = value.to(impl->compute).to(options.device).contiguous();
  }
  impl->resolve();
  return WanVae(std::move(impl));
}

at::Tensor WanVae::encode(const at::Tensor& video, bool normalise) const {
  at::NoGradGuard noGrad;
  const Impl& m = *impl_;
  const WanVaeConfig& c = m.config;
  at::Tensor x = video.dim() == 4 ? video.unsqueeze(0) : video;
  if (x.dim() != 5 || x.size(0) != 1 || x.size(1) != 3)
    throw std::invalid_argument("WanVae::encode: video must be [3, T, H, W] (or with a batch of 1), got " +
                                c10::str(video.sizes()));
  const std::int64_t frames = x.size(2), factor = c.temporalFactor(), s = c.spatialFactor();
  try {
    (void)c.latentFrames(frames);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(std::string("WanVae::encode: ") + error.what());
  }
  if (x.size(3) % s != 0 || x.size(4) % s != 0 || x.size(3) == 0 || x.size(4) == 0)
    throw std::invalid_argument("WanVae::encode: height and width must be positive multiples of " + std::to_string(s) +
                                ", got " + std::to_string(x.size(3)) + "x" + std::to_string(x.size(4)));
  x = patchify(x.to(m.device, m.compute), c.patch());
  Caches caches(m.encoder);
  std::vector<at::Tensor> chunks;
  // Frame 0 alone, then `factor` frames at a time (wan21.md §2.5).
  for (std::int64_t start = 0; start < frames; start += start == 0 ? 1 : factor) {
    const std::int64_t length = start == 0 ? 1 : factor;
    chunks.push_back(runCoder(m.encoder, x.narrow(2, start, length), caches));
  }
  const at::Tensor moments = at::conv3d(at::cat(chunks, 2), m.quant.weight, m.quant.bias);
  at::Tensor mu = moments.narrow(1, 0, c.zDim).to(at::kFloat);
  if (normalise) mu = (mu - m.mean) * m.invStd;
  return mu.squeeze(0).contiguous();
}

WanVaeDecodeStream WanVae::decodeStream(const VaeDecodeOptions& options) const {
  return WanVaeDecodeStream(std::make_unique<WanVaeDecodeStream::State>(impl_, options));
}

std::unique_ptr<VaeDecodeStream> WanVae::openDecodeStream(const VaeDecodeOptions& options) const {
  return std::make_unique<WanVaeDecodeStream>(decodeStream(options));
}

namespace {

// The whole clip, tile after tile (each tile through all frames with its own caches), blended
// linearly across the overlaps: [3, T, H, W] float32.
at::Tensor decodeTiled(const Coder& decoder, const at::Tensor& x, const WanVaeConfig& config, const VaeTiling& tiling,
                       bool clamp) {
  if (tiling.overlap < 0 || tiling.overlap >= tiling.tile)
    throw std::invalid_argument("WanVae::decode: tile overlap must be in [0, tile)");
  const std::int64_t latentT = x.size(2), lh = x.size(3), lw = x.size(4), s = config.spatialFactor();
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(x.device());
  at::Tensor out = at::zeros({3, config.pixelFrames(latentT), lh * s, lw * s}, f32);
  at::Tensor weight = at::zeros({1, 1, lh * s, lw * s}, f32);
  const std::int64_t th = std::min(tiling.tile, lh), tw = std::min(tiling.tile, lw);
  for (const std::int64_t y0 : tileStarts(lh, tiling.tile, tiling.overlap)) {
    for (const std::int64_t x0 : tileStarts(lw, tiling.tile, tiling.overlap)) {
      const at::Tensor mask = at::outer(ramp1d(th * s, tiling.overlap * s, y0 > 0, y0 + th < lh, f32),
                                        ramp1d(tw * s, tiling.overlap * s, x0 > 0, x0 + tw < lw, f32));
      weight.narrow(2, y0 * s, th * s).narrow(3, x0 * s, tw * s).add_(mask);
      Caches caches(decoder);
      const at::Tensor tileLatent = x.narrow(3, y0, th).narrow(4, x0, tw);
      for (std::int64_t i = 0, first = 0; i < latentT; ++i) {
        const at::Tensor decoded =
            unpatchify(runCoder(decoder, tileLatent.narrow(2, i, 1), caches), config.patch()).squeeze(0).to(at::kFloat);
        out.narrow(1, first, decoded.size(1))
            .narrow(2, y0 * s, th * s)
            .narrow(3, x0 * s, tw * s)
            .addcmul_(decoded, mask);
        first += decoded.size(1);
      }
    }
  }
  out.div_(weight.squeeze(0));
  if (clamp) out.clamp_(-1.0, 1.0);
  return out;
}

bool tiled(const VaeTiling& tiling, const at::Tensor& x) {
  return tiling.enabled() && (tiling.tile < x.size(3) || tiling.tile < x.size(4));
}

VaeDecodeOptions resolveTiling(VaeDecodeOptions options, const WanVaeConfig& config, const at::Tensor& x,
                               at::ScalarType dtype, bool wholeClip) {
  if (!options.tiling.enabled() && options.memoryBudget > 0)
    options.tiling =
        chooseWanVaeTiling(config, x.size(2), x.size(3), x.size(4), dtype, options.memoryBudget, wholeClip);
  return options;
}

}  // namespace

void WanVae::decode(const at::Tensor& latent, const VaeFrameSink& sink, const VaeDecodeOptions& requested) const {
  at::NoGradGuard noGrad;
  const Impl& m = *impl_;
  const at::Tensor x = m.prepareLatent(latent, requested.normalised);  // [1, z, T', h, w]
  const VaeDecodeOptions options = resolveTiling(requested, m.config, x, m.compute, false);
  const std::int64_t latentT = x.size(2);
  auto firstFrameOf = [&](std::int64_t i) { return i == 0 ? 0 : m.config.pixelFrames(i); };
  if (!tiled(options.tiling, x)) {
    Caches caches(m.decoder);
    for (std::int64_t i = 0; i < latentT; ++i)
      sink(m.finish(runCoder(m.decoder, x.narrow(2, i, 1), caches), options.clamp), firstFrameOf(i));
    return;
  }
  const at::Tensor out = decodeTiled(m.decoder, x, m.config, options.tiling, options.clamp);
  for (std::int64_t i = 0; i < latentT; ++i)
    sink(out.narrow(1, firstFrameOf(i), i == 0 ? 1 : m.config.temporalFactor()), firstFrameOf(i));
}

at::Tensor WanVae::decode(const at::Tensor& latent, const VaeDecodeOptions& requested) const {
  at::NoGradGuard noGrad;
  const Impl& m = *impl_;
  const at::Tensor x = m.prepareLatent(latent, requested.normalised);
  const VaeDecodeOptions options = resolveTiling(requested, m.config, x, m.compute, true);
  if (tiled(options.tiling, x)) return decodeTiled(m.decoder, x, m.config, options.tiling, options.clamp);
  const std::int64_t s = m.config.spatialFactor();
  at::Tensor out = at::empty({3, m.config.pixelFrames(x.size(2)), x.size(3) * s, x.size(4) * s},
                             at::TensorOptions().dtype(at::kFloat).device(m.device));
  Caches caches(m.decoder);
  for (std::int64_t i = 0, first = 0; i < x.size(2); ++i) {
    const at::Tensor frames = m.finish(runCoder(m.decoder, x.narrow(2, i, 1), caches), options.clamp);
    out.narrow(1, first, frames.size(1)).copy_(frames);
    first += frames.size(1);
  }
  return out;
}

}  // namespace shotchain::models
