#include "models/wan/wan_model.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "io/safetensors_header.h"
#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/detection_problems.h"
#include "models/wan/wan_model_impl.h"

namespace shotchain::models {
namespace {

enum class WeightKind { Matmul, Float32 };

struct ParamSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  WeightKind kind;
};

std::vector<ParamSpec> parameterSpecs(const WanConfig& c) {
  const std::int64_t d = c.dim;
  std::vector<ParamSpec> specs;
  auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, WeightKind kind) {
    specs.push_back({name + ".weight", {out, in}, kind});
    specs.push_back({name + ".bias", {out}, kind});
  };
  specs.push_back({"patch_embedding.weight", {d, c.inDim, c.patch[0], c.patch[1], c.patch[2]}, WeightKind::Matmul});
  specs.push_back({"patch_embedding.bias", {d}, WeightKind::Matmul});
  linear("text_embedding.0", d, c.textDim, WeightKind::Matmul);
  linear("text_embedding.2", d, d, WeightKind::Matmul);
  linear("time_embedding.0", d, c.freqDim, WeightKind::Float32);
  linear("time_embedding.2", d, d, WeightKind::Float32);
  linear("time_projection.1", 6 * d, d, WeightKind::Float32);
  for (std::int64_t i = 0; i < c.numLayers; ++i) {
    const std::string p = "blocks." + std::to_string(i) + ".";
    specs.push_back({p + "modulation", {1, 6, d}, WeightKind::Float32});
    for (const char* attn : {"self_attn", "cross_attn"}) {
      for (const char* proj : {"q", "k", "v", "o"}) linear(p + attn + "." + proj, d, d, WeightKind::Matmul);
      if (c.qkNorm) {
        specs.push_back({p + attn + ".norm_q.weight", {d}, WeightKind::Float32});
        specs.push_back({p + attn + ".norm_k.weight", {d}, WeightKind::Float32});
      }
    }
    if (c.hasImageEmbedding()) {
      linear(p + "cross_attn.k_img", d, d, WeightKind::Matmul);
      linear(p + "cross_attn.v_img", d, d, WeightKind::Matmul);
      if (c.qkNorm) specs.push_back({p + "cross_attn.norm_k_img.weight", {d}, WeightKind::Float32});
    }
    if (c.crossAttnNorm) {
      specs.push_back({p + "norm3.weight", {d}, WeightKind::Float32});
      specs.push_back({p + "norm3.bias", {d}, WeightKind::Float32});
    }
    linear(p + "ffn.0", c.ffnDim, d, WeightKind::Matmul);
    linear(p + "ffn.2", d, c.ffnDim, WeightKind::Matmul);
  }
  specs.push_back({"head.modulation", {1, 2, d}, WeightKind::Float32});
  linear("head.head", c.outDim * c.patchVolume(), d, WeightKind::Float32);
  if (c.injectSampleInfo) {
    specs.push_back({"fps_embedding.weight", {2, d}, WeightKind::Float32});
    linear("fps_projection.0", d, d, WeightKind::Float32);
    linear("fps_projection.2", 6 * d, d, WeightKind::Float32);
  }
  if (c.hasImageEmbedding()) {
    const std::int64_t i = c.imageDim;
    specs.push_back({"img_emb.proj.0.weight", {i}, WeightKind::Float32});
    specs.push_back({"img_emb.proj.0.bias", {i}, WeightKind::Float32});
    linear("img_emb.proj.1", i, i, WeightKind::Matmul);
    linear("img_emb.proj.3", d, i, WeightKind::Matmul);
    specs.push_back({"img_emb.proj.4.weight", {d}, WeightKind::Float32});
    specs.push_back({"img_emb.proj.4.bias", {d}, WeightKind::Float32});
    if (c.imagePositionTokens > 0)
      specs.push_back({"img_emb.emb_pos", {1, c.imagePositionTokens, i}, WeightKind::Float32});
  }
  return specs;
}

}  // namespace

WanModel::WanModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WanModel::~WanModel() = default;
WanModel::WanModel(WanModel&&) noexcept = default;
WanModel& WanModel::operator=(WanModel&&) noexcept = default;

const WanConfig& WanModel::config() const { return impl_->config; }

std::string WanModel::family() const { return impl_->config.family() + ", " + impl_->config.variant(); }

DitCapabilities WanModel::capabilities() const {
  return {impl_->config.takesPerFrameTimesteps(),
          impl_->causalBlockSize,
          impl_->causalBlockSize > 0,
          impl_->config.freshClipContinuation,
          impl_->config.modelType == "ti2v",
          impl_->config.imageConditionChannels(),
          impl_->config.imageTokens()};
}

std::int64_t WanModel::latentChannels() const { return impl_->config.outDim; }

std::int64_t WanModel::fpsConditioning(double fps) const {
  return impl_->config.injectSampleInfo ? wanFpsIndex(fps) : 0;
}

std::uint64_t WanModel::weightBytes() const {
  std::uint64_t bytes = 0;
  for (const auto& [name, tensor] : impl_->params) bytes += tensor.nbytes();
  return bytes;
}
at::ScalarType WanModel::computeDtype() const { return impl_->compute; }
void WanModel::setAttention(AttentionImpl impl) { impl_->attention = impl; }

void WanModel::setCausalBlockSize(std::int64_t frames) {
  if (frames < 0) throw std::invalid_argument("setCausalBlockSize: the block size must be 0 or positive");
  impl_->causalBlockSize = frames;
}

std::vector<std::pair<std::string, at::Tensor>> WanModel::namedParameters() const {
  return {impl_->params.begin(), impl_->params.end()};
}

void WanModel::replaceParameters(const std::function<at::Tensor(const std::string&, const at::Tensor&)>& transfer) {
  std::map<std::string, at::Tensor> replaced;
  for (const auto& [name, value] : impl_->params) {
    at::Tensor next = transfer(name, value);
    if (!next.defined() || next.sizes() != value.sizes() || next.scalar_type() != value.scalar_type())
      throw std::invalid_argument("replaceParameters: \"" + name + "\" changed shape or dtype");
    replaced.emplace(name, std::move(next));
  }
  impl_->params = std::move(replaced);
  impl_->device = impl_->params.begin()->second.device();
  impl_->resolve();
}

void WanModel::setLayerAdapters(std::map<std::string, std::vector<LayerAdapter>> adapters) {
  for (const auto& [name, list] : adapters) {
    const auto weight = impl_->params.find(name);
    if (weight == impl_->params.end() || weight->second.dim() != 2 || !name.ends_with(".weight") ||
        !impl_->params.count(name.substr(0, name.size() - 7) + ".bias"))
      throw std::invalid_argument("setLayerAdapters: \"" + name + "\" is not the weight of a linear layer");
  }
  impl_->adapters = std::move(adapters);
  impl_->resolve();
}

at::Device WanModel::device() const { return impl_->device; }

void WanModel::setTrainable(bool trainable) {
  for (auto& [name, tensor] : impl_->params) tensor.requires_grad_(trainable);
  impl_->trainable = trainable;
}

bool WanModel::trainable() const { return impl_->trainable; }

void WanModel::setParallel(std::shared_ptr<DitParallel> parallel) { impl_->parallel = std::move(parallel); }

std::string WanModel::blockCacheProblem() const {
  const DitParallel* parallel = impl_->parallel.get();
  if (parallel && (parallel->sequenceSize() > 1 || parallel->guidanceSize() > 1))
    return "not with the DiT spread over ranks (each rank would decide on its own part of the batch)";
  if (impl_->trainable) return "not while the DiT trains";
  return {};
}

void WanModel::setBlockCache(BlockCache* cache) const {
  if (cache)
    if (const std::string problem = blockCacheProblem(); !problem.empty()) throw std::invalid_argument(problem);
  impl_->blockCache = cache;
}

void WanModel::setImageEmbedding(const at::Tensor& features) const {
  const WanConfig& c = impl_->config;
  if (!features.defined()) {
    impl_->imageFeatures = at::Tensor();
    return;
  }
  if (!c.hasImageEmbedding())
    throw std::invalid_argument(family() + " has no image embedding: it takes no CLIP image features");
  if (features.dim() < 2 || features.dim() > 3 || features.size(-1) != c.imageDim || features.numel() == 0)
    throw std::invalid_argument("setImageEmbedding: CLIP features must be [tokens, " + std::to_string(c.imageDim) +
                                "] or [images, tokens, " + std::to_string(c.imageDim) + "]");
  const at::Tensor flat = features.to(at::kFloat).reshape({1, -1, c.imageDim}).contiguous();
  if (c.imagePositionTokens > 0 && flat.size(1) > c.imagePositionTokens)
    throw std::invalid_argument("setImageEmbedding: " + std::to_string(flat.size(1)) + " image tokens, but " +
                                family() + " has position rows for " + std::to_string(c.imagePositionTokens));
  impl_->imageFeatures = flat;
}

std::vector<std::pair<std::string, std::vector<std::int64_t>>> wanParameterShapes(const WanConfig& config) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes;
  for (ParamSpec& spec : parameterSpecs(config)) shapes.emplace_back(std::move(spec.name), std::move(spec.shape));
  return shapes;
}

WanModel WanModel::load(const io::WeightSet& weights, const WanLoadOptions& options) {
  const WanDetection detection = detectWanConfig(weights);
  requireNoDetectionProblems(weights.label(), "a Wan DiT", detection.problems);
  return load(weights, detection.config, options);
}

WanModel WanModel::load(const io::WeightSet& weights, const WanConfig& config, const WanLoadOptions& options) {
  config.check();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->attention = options.attention;
  impl->causalBlockSize = config.causalBlockSize;
  if (options.computeDtype) {
    impl->compute = *options.computeDtype;
  } else if (const io::WeightInfo* probe = weights.find(kWanMatmulProbe)) {
    impl->compute = io::matmulLoadDtype(probe, /*halfStaysHalf=*/true);
  }
  io::StrictWeightLoader loader(
      weights, "a " + config.modelType + " WanModel with " + std::to_string(config.numLayers) + " layers");
  for (const ParamSpec& spec : parameterSpecs(config)) {
    const bool linearWeight =
        spec.kind == WeightKind::Matmul && spec.shape.size() == 2 && spec.name.ends_with(".weight");
    if (options.keepQuantised && linearWeight && weights.storedAsFloat8(spec.name))
      loader.requireStoredFloat8(spec.name, spec.shape);
    else if (options.keepQuantised && linearWeight && weights.storedAsGgml(spec.name))
      loader.requireStoredGgml(spec.name, spec.shape);
    else
      loader.require(spec.name, spec.shape, spec.kind == WeightKind::Matmul ? impl->compute : at::kFloat);
  }
  impl->params = loader.finish(options.device);
  impl->resolve();
  return WanModel(std::move(impl));
}

WanModel WanModel::random(const WanConfig& config, std::uint64_t seed, const WanLoadOptions& options) {
  config.check();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->attention = options.attention;
  impl->causalBlockSize = config.causalBlockSize;
  impl->compute = options.computeDtype.value_or(at::kFloat);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  for (const ParamSpec& spec : parameterSpecs(config)) {
    at::Tensor value = at::randn(spec.shape, generator, at::TensorOptions().dtype(at::kFloat));
    const std::string& n = spec.name;
    const bool isBias = n.ends_with(".bias");
    if (n.find("norm") != std::string::npos && n.ends_with(".weight")) {
      value = value.mul_(0.1).add_(1.0);
    } else if (isBias) {
      value.mul_(0.05);
    } else if (n.find("modulation") != std::string::npos) {
      value.mul_(0.1);
    } else {
      std::int64_t fanIn = 1;
      for (std::size_t i = 1; i < spec.shape.size(); ++i) fanIn *= spec.shape[i];
      value.div_(std::sqrt(static_cast<double>(fanIn)));
    }
    const at::ScalarType type = spec.kind == WeightKind::Matmul ? impl->compute : at::kFloat;
    impl->params[n] = value.to(type).to(options.device).contiguous();
  }
  impl->resolve();
  return WanModel(std::move(impl));
}

at::Tensor wanSinusoidalEmbedding(std::int64_t freqDim, const at::Tensor& t) {
  const std::int64_t half = freqDim / 2;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(t.device());
  const at::Tensor position = t.to(at::kDouble).reshape({-1});
  const at::Tensor omega = at::pow(10000.0, at::arange(half, f64).neg().div(static_cast<double>(half)));
  const at::Tensor sinusoid = at::outer(position, omega);
  return at::cat({at::cos(sinusoid), at::sin(sinusoid)}, 1);
}

std::int64_t wanFpsIndex(double fps) { return fps == 16.0 ? 0 : 1; }

namespace {

// Per-frame timesteps [B, F] whose rows are constant are the one-timestep case: [B].
at::Tensor collapseUniformTimesteps(const at::Tensor& t) {
  if (t.dim() != 2) return t;
  const at::Tensor first = t.select(1, 0);
  return at::equal(t, first.unsqueeze(1).expand_as(t)) ? first.contiguous() : t;
}

// Timesteps as rows of [B, F] (per frame) or [B, L] (per token, L = F·h·w) from what a caller gives: [B],
// [B, F], or Wan 2.2's [B, S ≥ L] with one entry per token (entries past L are sequence padding). Per-token
// rows that are constant over each frame's tokens (TI2V's frame-0-at-0 rows) become per-frame rows.
at::Tensor timestepRows(const at::Tensor& t, std::int64_t frames, std::int64_t tokens) {
  if (t.dim() != 2 || t.size(1) == frames) return t;
  if (t.size(1) < tokens)
    throw std::invalid_argument("WanModel::forward: " + std::to_string(t.size(1)) +
                                " timesteps per sample: need one per " + "latent frame (" + std::to_string(frames) +
                                ") or one per token (at least " + std::to_string(tokens) + ")");
  const at::Tensor perToken = t.narrow(1, 0, tokens);
  const at::Tensor framed = perToken.view({t.size(0), frames, tokens / frames});
  const at::Tensor first = framed.select(2, 0);
  return at::equal(framed, first.unsqueeze(2).expand_as(framed)) ? first.contiguous() : perToken.contiguous();
}

// The adaLN rows of one forward: [B, K, dim] for one timestep per sample, or [B, F, K, dim] per frame.
// Applied to a token stream [B, L, dim] (L = F·tokensPerFrame) by viewing it per frame.
struct ModulationRows {
  at::Tensor rows;
  bool perFrame = false;
  std::int64_t frames = 1;

  at::Tensor row(std::int64_t k) const {
    return perFrame ? rows.select(2, k).unsqueeze(2) : rows.narrow(1, k, 1);  // [B, F, 1, dim] / [B, 1, dim]
  }
  at::Tensor framed(const at::Tensor& x) const {
    return perFrame ? x.view({x.size(0), frames, x.size(1) / frames, x.size(2)}) : x;
  }
  at::Tensor tokens(const at::Tensor& x) const {
    return perFrame ? x.reshape({x.size(0), x.size(1) * x.size(2), x.size(3)}) : x;
  }
  at::Tensor modulate(const at::Tensor& normed, std::int64_t shift, std::int64_t scale) const {
    return tokens(wanModulate(framed(normed), row(shift), row(scale)));
  }
  at::Tensor gate(const at::Tensor& x, const at::Tensor& y, std::int64_t k) const {
    return tokens(at::addcmul(framed(x), framed(y), row(k)));
  }
};

}  // namespace

std::vector<at::Tensor> WanModel::forward(const std::vector<at::Tensor>& xs, const at::Tensor& t,
                                          const std::vector<at::Tensor>& contexts, WanTrace* trace,
                                          std::int64_t fpsIndex) const {
  return run(xs, t, contexts, trace, fpsIndex, nullptr);
}

std::vector<at::Tensor> WanModel::run(const std::vector<at::Tensor>& xs, const at::Tensor& tIn,
                                      const std::vector<at::Tensor>& contexts, WanTrace* trace, std::int64_t fpsIndex,
                                      const StreamCall* stream) const {
  const Impl& m = *impl_;
  const WanConfig& c = m.config;
  const auto batch = static_cast<std::int64_t>(xs.size());
  if (batch == 0) throw std::invalid_argument("WanModel::forward: empty batch");
  if (contexts.size() != xs.size() || (tIn.dim() == 2 ? tIn.size(0) != batch : tIn.numel() != batch))
    throw std::invalid_argument(
        "WanModel::forward: need one timestep (or one row of per-frame or per-token timesteps) "
        "and one context per latent");
  std::optional<at::NoGradGuard> noGrad;
  if (!m.trainable) noGrad.emplace();
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(m.device);

  // 1. Patch embedding, per sample, into a padded token batch.
  struct Grid {
    std::int64_t f, h, w;
  };
  std::vector<Grid> grids;
  std::vector<at::Tensor> tokens;
  std::vector<std::int64_t> lengths;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const at::Tensor& x = xs[i];
    if (x.dim() != 4 || x.size(0) != c.inDim || x.size(1) % c.patch[0] != 0 || x.size(2) % c.patch[1] != 0 ||
        x.size(3) % c.patch[2] != 0)
      throw std::invalid_argument("WanModel::forward: latent " + std::to_string(i) + " must be [" +
                                  std::to_string(c.inDim) + ", F, H, W] with F, H, W multiples of the patch size");
    const at::Tensor embedded = at::conv3d(x.to(m.device).to(m.compute).unsqueeze(0), m.patchWeight, m.patchBias,
                                           {c.patch[0], c.patch[1], c.patch[2]});
    if (trace && i == 0) (*trace)["patch_embedding"] = embedded.to(at::kFloat);
    grids.push_back({embedded.size(2), embedded.size(3), embedded.size(4)});
    tokens.push_back(embedded.flatten(2).transpose(1, 2).squeeze(0).to(at::kFloat));
    lengths.push_back(tokens.back().size(0));
  }
  const std::int64_t maxLength = *std::max_element(lengths.begin(), lengths.end());
  const bool ragged = std::any_of(lengths.begin(), lengths.end(), [&](std::int64_t l) { return l != maxLength; });
  const std::int64_t causalFrames = m.causalBlockSize;
  if (ragged && (tIn.dim() == 2 || causalFrames > 0 || stream))
    throw std::invalid_argument(
        "WanModel::forward: per-frame timesteps and block-causal attention need latents of one size");
  const at::Tensor t = collapseUniformTimesteps(timestepRows(tIn, grids.front().f, maxLength));
  const bool perFrame = t.dim() == 2;
  at::Tensor x = at::zeros({batch, maxLength, c.dim}, f32);
  for (std::int64_t b = 0; b < batch; ++b)
    x[b].narrow(0, 0, lengths[static_cast<std::size_t>(b)]).copy_(tokens[static_cast<std::size_t>(b)]);
  tokens.clear();
  // Sequence parallel (Ulysses): this rank keeps 1/N of the (padded) tokens; pad keys are masked.
  // A stream chunk runs whole on every rank (its cache is per rank).
  const DitRunner runner({m.parallel.get(), m.blockCache, trace, stream != nullptr, ragged, m.trainable}, maxLength,
                         c.numHeads);
  const UlyssesSplit* split = runner.split();
  const std::vector<std::int64_t> keyLengths = runner.keyLengths(batch, lengths);
  const std::int64_t causalTokens = causalFrames > 0 ? causalFrames * grids.front().h * grids.front().w : 0;
  x = runner.shard(x);

  // 2–3. Time embedding (sinusoid in float64) and the 6·dim projection, float32, per sample or per
  // frame; the fps term (SkyReels-V2 DF) joins the block modulation, not the head's.
  const std::int64_t framesIn = perFrame ? t.size(1) : 1;
  const std::int64_t frames = split && perFrame ? split->shard() : framesIn;  // a shard's rows are per token
  const at::Tensor sinusoid = wanSinusoidalEmbedding(c.freqDim, t.to(m.device));
  const at::Tensor e = m.time2(at::silu(m.time0(sinusoid.to(at::kFloat))));  // [B·F, dim]
  const at::Tensor e0 = m.timeProjection(at::silu(e));                       // [B·F, 6·dim]
  runner.trace("sinusoidal_t", sinusoid);
  runner.trace("time_embedding", e);
  runner.trace("time_projection", e0);
  at::Tensor e0rows = perFrame ? e0.view({batch, framesIn, 6, c.dim}) : e0.view({batch, 6, c.dim});
  if (m.fpsEmbedding.defined()) {
    if (fpsIndex < 0 || fpsIndex >= m.fpsEmbedding.size(0))
      throw std::invalid_argument("WanModel::forward: fps index " + std::to_string(fpsIndex) +
                                  " (0: 16 fps, 1: other)");
    const at::Tensor fps = m.fps2(at::silu(m.fps0(m.fpsEmbedding[fpsIndex].unsqueeze(0))));  // [1, 6·dim]
    runner.trace("fps_projection", fps);
    e0rows = e0rows + (perFrame ? fps.view({1, 1, 6, c.dim}) : fps.view({1, 6, c.dim}));
  }
  const std::int64_t tokensPerFrame = maxLength / framesIn;
  if (perFrame) e0rows = runner.rowsPerToken(e0rows, tokensPerFrame);

  // 4. Text embedding over the zero-padded text_len rows (no mask anywhere).
  at::Tensor padded = at::zeros({batch, c.textLen, c.textDim}, f32);
  for (std::int64_t b = 0; b < batch; ++b) {
    const at::Tensor& ctx = contexts[static_cast<std::size_t>(b)];
    if (ctx.dim() != 2 || ctx.size(1) != c.textDim || ctx.size(0) > c.textLen)
      throw std::invalid_argument("WanModel::forward: context " + std::to_string(b) + " must be [L ≤ " +
                                  std::to_string(c.textLen) + ", " + std::to_string(c.textDim) + "]");
    padded[b].narrow(0, 0, ctx.size(0)).copy_(ctx);
  }
  at::Tensor context = m.text2(at::gelu(m.text0(padded), "tanh"));
  if (runner.tracing()) runner.trace("text_embedding", context.to(at::kFloat));
  // 4b. Wan 2.1 I2V / FLF2V: the projected CLIP tokens go ahead of the text (the same for every batch row).
  if (c.hasImageEmbedding()) {
    const at::Tensor image = m.imageContext();
    runner.trace("img_emb", image);
    context = at::cat({image.to(context.scalar_type()).expand({batch, -1, -1}), context}, 1);
  }

  // 5. RoPE angles per sample; padding rows stay unrotated. A stream chunk comes after the cached frames.
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(m.device);
  at::Tensor cos = at::ones({batch, maxLength, c.headDim() / 2}, f64);
  at::Tensor sin = at::zeros({batch, maxLength, c.headDim() / 2}, f64);
  StreamRope streamRope;
  if (stream) {
    streamRope = streamRopeFor(*stream->cache, stream->firstBranch, batch, c.headDim(), grids.front().f,
                               grids.front().h, grids.front().w, m.device);
  }
  for (std::int64_t b = 0; b < batch && !stream; ++b) {
    const Grid& g = grids[static_cast<std::size_t>(b)];
    const at::Tensor angles = ropeGridAngles(c.headDim(), g.f, g.h, g.w).to(m.device);
    cos[b].narrow(0, 0, angles.size(0)).copy_(at::cos(angles));
    sin[b].narrow(0, 0, angles.size(0)).copy_(at::sin(angles));
  }
  cos = runner.shard(cos, 1.0);
  sin = runner.shard(sin, 0.0);

  // 6. Attention blocks [from, to) over rows of tokens, each with its rows of the modulation, the context and RoPE.
  const auto blocksOver = [&](at::Tensor h, std::size_t from, std::size_t to, const std::vector<at::Tensor>& in) {
    const at::Tensor& rows = in[0];
    for (std::size_t i = from; i < to; ++i) {
      const Block& block = m.blocks[i];
      const ModulationRows mod{perFrame ? block.modulation.unsqueeze(0) + rows : block.modulation + rows, perFrame,
                               frames};  // float32
      at::Tensor z = mod.modulate(m.layerNorm(h), 0, 1);
      const at::Tensor selfOut =
          (stream ? m.cachedSelfAttention(block.self, z, streamRope, *stream->cache, static_cast<std::int64_t>(i),
                                          stream->firstBranch, causalTokens)
                  : m.selfAttention(block.self, z, in[2], in[3], keyLengths, causalTokens, split))
              .to(at::kFloat);
      h = mod.gate(h, selfOut, 2);
      z = c.crossAttnNorm ? at::layer_norm(h, {c.dim}, block.norm3Weight, block.norm3Bias, c.eps) : h;
      const at::Tensor crossOut = m.crossAttention(block.cross, z, in[1]).to(at::kFloat);
      h = h + crossOut;
      z = mod.modulate(m.layerNorm(h), 3, 4);
      const at::Tensor ffnOut = block.ffn2(at::gelu(block.ffn0(z), "tanh")).to(at::kFloat);
      h = mod.gate(h, ffnOut, 5);
      if (runner.tracing()) {
        const std::string name = "blocks." + std::to_string(i);
        runner.trace(name + ".self_attn", selfOut);
        runner.trace(name + ".cross_attn", crossOut);
        runner.trace(name + ".ffn", ffnOut);
        runner.trace(name, h);
      }
    }
    return h;
  };
  x = runner.blocks(blocksOver, m.blocks.size(), x, {e0rows, context, cos, sin}, e, e0rows);

  // 7. Head (uses e, not e0), float32.
  at::Tensor headRows = e.view({batch, framesIn, 1, c.dim});
  if (perFrame) headRows = runner.rowsPerToken(headRows, tokensPerFrame);
  const ModulationRows headMod{perFrame ? m.headModulation.unsqueeze(0) + headRows : m.headModulation + e.unsqueeze(1),
                               perFrame, frames};  // [B, (F,) 2, dim]
  const at::Tensor y = runner.gather(m.head(headMod.modulate(m.layerNorm(x), 0, 1)));
  runner.trace("head", y);

  // 8. Unpatchify: token channels ordered (pt, ph, pw, c).
  std::vector<at::Tensor> outputs;
  for (std::int64_t b = 0; b < batch; ++b) {
    const Grid& g = grids[static_cast<std::size_t>(b)];
    const at::Tensor yb = y[b].narrow(0, 0, lengths[static_cast<std::size_t>(b)])
                              .view({g.f, g.h, g.w, c.patch[0], c.patch[1], c.patch[2], c.outDim});
    outputs.push_back(yb.permute({6, 0, 3, 1, 4, 2, 5})
                          .reshape({c.outDim, g.f * c.patch[0], g.h * c.patch[1], g.w * c.patch[2]})
                          .to(at::kFloat));
  }
  return outputs;
}

at::Tensor WanModel::forwardBatch(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                  std::int64_t fpsIndex) const {
  auto whole = [&](const at::Tensor& xb, const at::Tensor& tb, const at::Tensor& cb) {
    std::vector<at::Tensor> xs, contexts;
    for (std::int64_t b = 0; b < xb.size(0); ++b) {
      xs.push_back(xb[b]);
      contexts.push_back(cb[b]);
    }
    return at::stack(forward(xs, tb, contexts, nullptr, fpsIndex));
  };
  return impl_->parallel ? forwardGuidanceParallel(*impl_->parallel, x, t, context, whole) : whole(x, t, context);
}

double wanForwardFlops(const WanConfig& c, std::int64_t tokens) {
  const auto L = static_cast<double>(tokens), T = static_cast<double>(c.textLen), d = static_cast<double>(c.dim),
             f = static_cast<double>(c.ffnDim), pv = static_cast<double>(c.patchVolume());
  double flops = 2 * L * d * static_cast<double>(c.inDim) * pv;           // patch embedding
  flops += 2 * T * (static_cast<double>(c.textDim) * d + d * d);          // text embedding
  flops += 2 * (static_cast<double>(c.freqDim) * d + d * d + 6 * d * d);  // time MLP
  const double block = 2 * L * d * d * 4                                  // self q, k, v, o
                       + 2 * 2 * L * L * d                                // self attention
                       + 2 * L * d * d * 2 + 2 * T * d * d * 2            // cross q, o and k, v
                       + 2 * 2 * L * T * d                                // cross attention
                       + 2 * 2 * L * d * f;                               // FFN
  if (c.hasImageEmbedding()) {
    const double image = static_cast<double>(c.imageTokens()), i = static_cast<double>(c.imageDim);
    flops += 2 * image * (i * i + i * d);  // img_emb
    flops +=
        static_cast<double>(c.numLayers) * (2 * image * d * d * 2 + 2 * 2 * L * image * d);  // k_img, v_img, attention
  }
  flops += static_cast<double>(c.numLayers) * block;
  flops += 2 * L * d * static_cast<double>(c.outDim) * pv;  // head
  return flops;
}

}  // namespace shotchain::models
