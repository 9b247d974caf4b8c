#include "models/umt5/umt5.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "io/safetensors_header.h"
#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/detection_problems.h"

namespace shotchain::models {
namespace {

enum class Kind { Matmul, Float32 };

struct ParamSpec {
  std::string name;  // official (Wan) name
  std::vector<std::int64_t> shape;
  Kind kind;
};

std::string block(std::int64_t i) { return "blocks." + std::to_string(i) + "."; }

std::vector<ParamSpec> parameterSpecs(const Umt5Config& c) {
  std::vector<ParamSpec> specs;
  specs.push_back({"token_embedding.weight", {c.vocab, c.dim}, Kind::Matmul});
  for (std::int64_t i = 0; i < c.numLayers; ++i) {
    const std::string p = block(i);
    specs.push_back({p + "norm1.weight", {c.dim}, Kind::Float32});
    for (const char* proj : {"q", "k", "v"})
      specs.push_back({p + "attn." + proj + ".weight", {c.dimAttn, c.dim}, Kind::Matmul});
    specs.push_back({p + "attn.o.weight", {c.dim, c.dimAttn}, Kind::Matmul});
    specs.push_back({p + "pos_embedding.embedding.weight", {c.numBuckets, c.numHeads}, Kind::Float32});
    specs.push_back({p + "norm2.weight", {c.dim}, Kind::Float32});
    specs.push_back({p + "ffn.gate.0.weight", {c.dimFfn, c.dim}, Kind::Matmul});
    specs.push_back({p + "ffn.fc1.weight", {c.dimFfn, c.dim}, Kind::Matmul});
    specs.push_back({p + "ffn.fc2.weight", {c.dim, c.dimFfn}, Kind::Matmul});
  }
  specs.push_back({"norm.weight", {c.dim}, Kind::Float32});
  return specs;
}

// Tensors a text-encoder file may carry that are not part of the encoder.
bool ignorable(const std::string& name) {
  return name == "spiece_model" || name == "encoder.embed_tokens.weight" || name.starts_with("decoder.") ||
         name == "lm_head.weight";
}

// The stored name of `official` in these weights (HF files may keep the embedding only as the
// tied encoder.embed_tokens.weight).
std::string resolveStored(const io::WeightSet& weights, const std::string& official, Umt5Naming naming) {
  const std::string stored = umt5StoredName(official, naming);
  if (naming == Umt5Naming::HuggingFace && official == "token_embedding.weight" && !weights.find(stored) &&
      weights.find("encoder.embed_tokens.weight"))
    return "encoder.embed_tokens.weight";
  return stored;
}

}  // namespace

std::uint64_t Umt5Config::parameterCount() const {
  const auto d = static_cast<std::uint64_t>(dim), a = static_cast<std::uint64_t>(dimAttn),
             f = static_cast<std::uint64_t>(dimFfn);
  const std::uint64_t layer = 2 * d + 4 * d * a + static_cast<std::uint64_t>(numBuckets * numHeads) + 3 * d * f;
  return static_cast<std::uint64_t>(vocab) * d + static_cast<std::uint64_t>(numLayers) * layer + d;
}

std::string Umt5Config::variant() const {
  const Umt5Config xxl = preset("xxl"), tiny = preset("tiny");
  auto same = [this](const Umt5Config& o) {
    return vocab == o.vocab && dim == o.dim && dimAttn == o.dimAttn && dimFfn == o.dimFfn && numHeads == o.numHeads &&
           numLayers == o.numLayers && numBuckets == o.numBuckets;
  };
  if (same(xxl)) return "umt5-xxl";
  if (same(tiny)) return "tiny";
  return "custom";
}

void Umt5Config::check() const {
  const std::initializer_list<std::pair<std::int64_t, const char*>> sizes = {{vocab, "vocab"},
                                                                             {dim, "dim"},
                                                                             {dimAttn, "dim_attn"},
                                                                             {dimFfn, "dim_ffn"},
                                                                             {numHeads, "num_heads"},
                                                                             {numLayers, "num_layers"},
                                                                             {numBuckets, "num_buckets"},
                                                                             {maxDistance, "max_distance"}};
  for (const auto& [value, name] : sizes)
    if (value <= 0) throw std::invalid_argument(std::string(name) + " must be positive");
  if (dimAttn % numHeads != 0)
    throw std::invalid_argument("dim_attn " + std::to_string(dimAttn) + " is not a multiple of num_heads " +
                                std::to_string(numHeads));
  if (numBuckets % 4 != 0 || numBuckets < 4)
    throw std::invalid_argument("num_buckets " + std::to_string(numBuckets) + " must be a multiple of 4");
  if (maxDistance <= numBuckets / 4)
    throw std::invalid_argument("max_distance must exceed the exact range num_buckets/4");
  if (!(eps > 0)) throw std::invalid_argument("eps must be positive");
}

Umt5Config Umt5Config::preset(std::string_view name) {
  Umt5Config c;
  if (name == "xxl" || name == "umt5-xxl") return c;
  if (name == "tiny") {
    c.vocab = 256;
    c.dim = 32;
    c.dimAttn = 32;
    c.dimFfn = 64;
    c.numHeads = 2;
    c.numLayers = 2;
    return c;
  }
  throw std::invalid_argument("unknown UMT5 preset \"" + std::string(name) + "\" (xxl, tiny)");
}

std::string umt5StoredName(const std::string& official, Umt5Naming naming) {
  if (naming == Umt5Naming::Wan) return official;
  if (official == "token_embedding.weight") return "shared.weight";
  if (official == "norm.weight") return "encoder.final_layer_norm.weight";
  if (!official.starts_with("blocks.")) return official;
  const std::size_t dot = official.find('.', 7);
  const std::string index = official.substr(7, dot - 7);
  const std::string rest = official.substr(dot + 1);
  const std::string p = "encoder.block." + index + ".layer.";
  static const std::map<std::string, std::string> kMap = {
      {"norm1.weight", "0.layer_norm.weight"},
      {"attn.q.weight", "0.SelfAttention.q.weight"},
      {"attn.k.weight", "0.SelfAttention.k.weight"},
      {"attn.v.weight", "0.SelfAttention.v.weight"},
      {"attn.o.weight", "0.SelfAttention.o.weight"},
      {"pos_embedding.embedding.weight", "0.SelfAttention.relative_attention_bias.weight"},
      {"norm2.weight", "1.layer_norm.weight"},
      {"ffn.gate.0.weight", "1.DenseReluDense.wi_0.weight"},  // the GELU branch
      {"ffn.fc1.weight", "1.DenseReluDense.wi_1.weight"},     // the linear branch
      {"ffn.fc2.weight", "1.DenseReluDense.wo.weight"},
  };
  const auto it = kMap.find(rest);
  return it == kMap.end() ? official : p + it->second;
}

Umt5Detection detectUmt5Config(const io::WeightSet& weights) {
  Umt5Detection d;
  if (weights.find("blocks.0.norm1.weight") || weights.find("token_embedding.weight")) {
    d.naming = Umt5Naming::Wan;
  } else if (weights.find("encoder.block.0.layer.0.layer_norm.weight") || weights.find("shared.weight") ||
             weights.find("encoder.final_layer_norm.weight")) {
    d.naming = Umt5Naming::HuggingFace;
  } else {
    d.problems.push_back("no T5/UMT5 encoder tensors (token_embedding.weight / shared.weight)");
    return d;
  }
  d.isUmt5 = true;
  Umt5Config& c = d.config;
  auto info = [&](const std::string& official) { return weights.find(resolveStored(weights, official, d.naming)); };
  auto shape2 = [&](const std::string& official, std::int64_t& rows, std::int64_t& cols) {
    const io::WeightInfo* w = info(official);
    if (!w) {
      d.problems.push_back("tensor \"" + umt5StoredName(official, d.naming) + "\" is missing");
      return false;
    }
    if (w->shape.size() != 2) {
      d.problems.push_back("tensor \"" + w->name + "\" has shape " + io::formatShape(w->shape) + ", expected 2-D");
      return false;
    }
    rows = static_cast<std::int64_t>(w->shape[0]);
    cols = static_cast<std::int64_t>(w->shape[1]);
    return true;
  };
  std::int64_t unused = 0;
  shape2("token_embedding.weight", c.vocab, c.dim);
  shape2("blocks.0.attn.q.weight", c.dimAttn, unused);
  shape2("blocks.0.ffn.gate.0.weight", c.dimFfn, unused);
  if (!info("blocks.0.pos_embedding.embedding.weight") &&
      (weights.find("pos_embedding.embedding.weight") || info("blocks.0.norm1.weight"))) {
    d.problems.push_back("classic T5 (one shared position-bias table) is not supported: UMT5 has one per layer");
    return d;
  }
  shape2("blocks.0.pos_embedding.embedding.weight", c.numBuckets, c.numHeads);
  c.numLayers = 0;
  while (info(block(c.numLayers) + "norm1.weight")) ++c.numLayers;
  if (c.numLayers == 0) d.problems.push_back("no encoder blocks");
  if (c.numLayers > 1 && !info(block(1) + "pos_embedding.embedding.weight"))
    d.problems.push_back(
        "classic T5 (only layer 0 has a position-bias table) is not supported: UMT5 has one per layer");
  if (d.problems.empty()) {
    try {
      c.check();
    } catch (const std::invalid_argument& error) {
      d.problems.push_back(error.what());
    }
  }
  return d;
}

std::int64_t umt5RelativePositionBucket(std::int64_t rel, std::int64_t numBuckets, std::int64_t maxDistance) {
  const std::int64_t half = numBuckets / 2;  // buckets per direction
  const std::int64_t base = rel > 0 ? half : 0;
  const std::int64_t distance = rel < 0 ? -rel : rel;
  const std::int64_t maxExact = half / 2;
  // The reference computes the logarithm for every distance, including 0 (log 0 = −inf, then
  // discarded by torch.where); the exact branch is taken first here, so no −inf is converted.
  if (distance < maxExact) return base + distance;
  // float32 maths as in the reference: log(a / max_exact) / log(max_dist / max_exact) · (half −
  // max_exact), truncated toward zero.
  const float ratio = static_cast<float>(distance) / static_cast<float>(maxExact);
  const auto range = static_cast<float>(std::log(static_cast<double>(maxDistance) / static_cast<double>(maxExact)));
  const float scaled = std::log(ratio) / range * static_cast<float>(half - maxExact);
  const std::int64_t large = maxExact + static_cast<std::int64_t>(scaled);
  return base + std::min(large, half - 1);
}

at::Tensor umt5RelativePositionBuckets(const at::Tensor& rel, std::int64_t numBuckets, std::int64_t maxDistance) {
  const at::Tensor r = rel.to(at::kCPU, at::kLong).contiguous();
  at::Tensor out = at::empty_like(r);
  const std::int64_t* in = r.data_ptr<std::int64_t>();
  std::int64_t* o = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < r.numel(); ++i) o[i] = umt5RelativePositionBucket(in[i], numBuckets, maxDistance);
  return out.to(rel.device());
}

struct Umt5Encoder::Impl {
  struct Layer {
    at::Tensor norm1, q, k, v, o, posTable, norm2, gate, fc1, fc2;
  };

  Umt5Config config;
  Umt5Naming naming = Umt5Naming::Wan;
  at::ScalarType compute = at::kFloat;
  at::Device device = at::kCPU;
  std::map<std::string, at::Tensor> params;  // official names
  // Resolved references into params:
  at::Tensor embedding, finalNorm;
  std::vector<Layer> layers;

  void resolve() {
    auto get = [this](const std::string& name) { return params.at(name); };
    embedding = get("token_embedding.weight");
    finalNorm = get("norm.weight");
    layers.clear();
    for (std::int64_t i = 0; i < config.numLayers; ++i) {
      const std::string p = block(i);
      layers.push_back({get(p + "norm1.weight"), get(p + "attn.q.weight"), get(p + "attn.k.weight"),
                        get(p + "attn.v.weight"), get(p + "attn.o.weight"), get(p + "pos_embedding.embedding.weight"),
                        get(p + "norm2.weight"), get(p + "ffn.gate.0.weight"), get(p + "ffn.fc1.weight"),
                        get(p + "ffn.fc2.weight")});
    }
  }

  void requireLoaded() const {
    if (params.empty()) throw std::logic_error("Umt5Encoder: used after unload()");
  }

  // T5LayerNorm: weight · x / √(mean(x²) + eps), in float32.
  at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight) const {
    return weight * (x * at::rsqrt(x.pow(2).mean(-1, true) + config.eps));
  }

  at::Tensor linear(const at::Tensor& x, const at::Tensor& weight) const { return at::linear(x.to(compute), weight); }

  // The reference's fp16 guard: after a residual add in float16, clamp to ±(65504 − 1000) when
  // anything overflowed. Our residual stream is float32, so only an fp16 matmul can overflow.
  at::Tensor fp16Guard(const at::Tensor& x) const {
    if (compute != at::kHalf || !at::isinf(x).any().item<bool>()) return x;
    const double limit = 65504.0 - 1000.0;
    return at::clamp(x, -limit, limit);
  }

  at::Tensor bucketTable(std::int64_t lq, std::int64_t lk) const {
    // rel = j − i takes lq + lk − 1 values; compute each bucket once.
    std::vector<std::int64_t> byRel(static_cast<std::size_t>(lq + lk - 1));
    for (std::int64_t r = -(lq - 1); r < lk; ++r)
      byRel[static_cast<std::size_t>(r + lq - 1)] =
          umt5RelativePositionBucket(r, config.numBuckets, config.maxDistance);
    const at::Tensor lookup = at::tensor(byRel, at::TensorOptions().dtype(at::kLong));
    const at::Tensor rel = at::arange(lk, at::kLong).unsqueeze(0) - at::arange(lq, at::kLong).unsqueeze(1) + (lq - 1);
    return lookup.index_select(0, rel.reshape({-1})).view({lq, lk}).to(device);
  }

  at::Tensor bias(const Layer& layer, const at::Tensor& buckets) const {
    return at::embedding(layer.posTable, buckets).permute({2, 0, 1}).unsqueeze(0).contiguous();  // [1, H, Lq, Lk]
  }

  at::Tensor attention(const Layer& layer, const at::Tensor& h, const at::Tensor& attnBias) const {
    const std::int64_t b = h.size(0), l = h.size(1), heads = config.numHeads, d = config.headDim();
    const at::Tensor q = linear(h, layer.q).view({b, l, heads, d}).transpose(1, 2);
    const at::Tensor k = linear(h, layer.k).view({b, l, heads, d}).transpose(1, 2);
    const at::Tensor v = linear(h, layer.v).view({b, l, heads, d}).transpose(1, 2);
    // No 1/√d scaling (T5). Softmax in float32 as in the reference.
    const at::Tensor logits = at::matmul(q, k.transpose(-1, -2)).to(at::kFloat) + attnBias;
    const at::Tensor probabilities = at::softmax(logits, -1).to(compute);
    const at::Tensor out = at::matmul(probabilities, v).transpose(1, 2).reshape({b, l, config.dimAttn});
    return linear(out, layer.o).to(at::kFloat);
  }

  // fc2(fc1(x) · gelu_tanh(gate(x))).
  at::Tensor ffn(const Layer& layer, const at::Tensor& h) const {
    const at::Tensor gated = linear(h, layer.fc1) * at::gelu(linear(h, layer.gate), "tanh");
    return linear(gated, layer.fc2).to(at::kFloat);
  }
};

Umt5Encoder::Umt5Encoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Umt5Encoder::~Umt5Encoder() = default;
Umt5Encoder::Umt5Encoder(Umt5Encoder&&) noexcept = default;
Umt5Encoder& Umt5Encoder::operator=(Umt5Encoder&&) noexcept = default;

const Umt5Config& Umt5Encoder::config() const { return impl_->config; }
at::ScalarType Umt5Encoder::computeDtype() const { return impl_->compute; }
at::Device Umt5Encoder::device() const { return impl_->device; }
Umt5Naming Umt5Encoder::naming() const { return impl_->naming; }
bool Umt5Encoder::isLoaded() const { return impl_ && !impl_->params.empty(); }

void Umt5Encoder::unload() {
  Impl& m = *impl_;
  m.layers.clear();
  m.layers.shrink_to_fit();
  m.embedding.reset();
  m.finalNorm.reset();
  m.params.clear();
}

std::uint64_t Umt5Encoder::parameterBytes() const {
  std::uint64_t bytes = 0;
  for (const auto& [name, tensor] : impl_->params) bytes += tensor.nbytes();
  return bytes;
}

std::vector<std::pair<std::string, at::Tensor>> Umt5Encoder::namedParameters() const {
  return {impl_->params.begin(), impl_->params.end()};
}

Umt5Encoder Umt5Encoder::load(const io::WeightSet& weights, const Umt5LoadOptions& options) {
  const Umt5Detection detection = detectUmt5Config(weights);
  requireNoDetectionProblems(weights.label(), "a UMT5 text encoder", detection.problems);
  return load(weights, detection.config, options);
}

Umt5Encoder Umt5Encoder::load(const io::WeightSet& weights, const Umt5Config& config, const Umt5LoadOptions& options) {
  config.check();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->naming = weights.find("token_embedding.weight") || weights.find("blocks.0.norm1.weight")
                     ? Umt5Naming::Wan
                     : Umt5Naming::HuggingFace;
  const io::WeightInfo* probe = weights.find(resolveStored(weights, "blocks.0.ffn.fc1.weight", impl->naming));
  if (options.computeDtype) {
    impl->compute = *options.computeDtype;
  } else if (probe) {
    impl->compute = io::matmulLoadDtype(probe, /*halfStaysHalf=*/false);
  }
  io::StrictWeightLoader loader(weights, "a UMT5 encoder with " + std::to_string(config.numLayers) + " layers");
  for (const ParamSpec& spec : parameterSpecs(config))
    loader.require(spec.name, spec.shape, spec.kind == Kind::Matmul ? impl->compute : at::kFloat,
                   resolveStored(weights, spec.name, impl->naming));
  loader.tolerate(ignorable);
  impl->params = loader.finish(options.device);
  impl->resolve();
  return Umt5Encoder(std::move(impl));
}

Umt5Encoder Umt5Encoder::random(const Umt5Config& config, std::uint64_t seed, const Umt5LoadOptions& options) {
  config.check();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->compute = options.computeDtype.value_or(at::kFloat);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  for (const ParamSpec& spec : parameterSpecs(config)) {
    at::Tensor value = at::randn(spec.shape, generator, at::TensorOptions().dtype(at::kFloat));
    const std::string& n = spec.name;
    if (n.find("norm") != std::string::npos) {
      value = at::ones(spec.shape, at::TensorOptions().dtype(at::kFloat));
    } else if (n.find("pos_embedding") != std::string::npos) {
      value.mul_(0.1);
    } else if (n != "token_embedding.weight") {
      value.div_(std::sqrt(static_cast<double>(spec.shape[1])));
    }
    const at::ScalarType type = spec.kind == Kind::Matmul ? impl->compute : at::kFloat;
    impl->params[n] = value.to(type).to(options.device).contiguous();
  }
  impl->resolve();
  return Umt5Encoder(std::move(impl));
}

at::Tensor Umt5Encoder::positionBias(std::int64_t layer, std::int64_t lq, std::int64_t lk) const {
  const Impl& m = *impl_;
  m.requireLoaded();
  if (layer < 0 || layer >= m.config.numLayers || lq <= 0 || lk <= 0)
    throw std::invalid_argument("Umt5Encoder::positionBias: layer or length out of range");
  at::NoGradGuard noGrad;
  return m.bias(m.layers[static_cast<std::size_t>(layer)], m.bucketTable(lq, lk));
}

at::Tensor Umt5Encoder::forward(const at::Tensor& ids, const at::Tensor& mask, Umt5Trace* trace) const {
  const Impl& m = *impl_;
  m.requireLoaded();
  if (ids.dim() != 2 || ids.size(1) == 0 || at::isFloatingType(ids.scalar_type()))
    throw std::invalid_argument("Umt5Encoder::forward: ids must be an integer tensor [B, L] with L > 0");
  if (mask.defined() && mask.sizes() != ids.sizes())
    throw std::invalid_argument("Umt5Encoder::forward: mask must have the shape of ids");
  at::NoGradGuard noGrad;
  const std::int64_t b = ids.size(0), l = ids.size(1);
  const at::Tensor tokens = ids.to(m.device, at::kLong);
  if (tokens.min().item<std::int64_t>() < 0 || tokens.max().item<std::int64_t>() >= m.config.vocab)
    throw std::invalid_argument("Umt5Encoder::forward: token id outside the vocabulary of " +
                                std::to_string(m.config.vocab));
  at::Tensor x = at::embedding(m.embedding, tokens).to(at::kFloat);
  // Padded keys get the lowest float in place of the position bias (reference: masked_fill of
  // the bias with finfo.min, then added to q·k), so their softmax weight is exactly zero.
  at::Tensor padded;
  if (mask.defined()) padded = mask.to(m.device).eq(0).reshape({b, 1, 1, l});
  const at::Tensor buckets = m.bucketTable(l, l);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const Impl::Layer& layer = m.layers[i];
    const std::string name = "blocks." + std::to_string(i);
    at::Tensor attnBias = m.bias(layer, buckets);
    if (trace) (*trace)[name + ".pos_bias"] = attnBias;
    if (padded.defined()) attnBias = attnBias.masked_fill(padded, std::numeric_limits<float>::lowest());
    x = m.fp16Guard(x + m.attention(layer, m.rmsNorm(x, layer.norm1), attnBias));
    x = m.fp16Guard(x + m.ffn(layer, m.rmsNorm(x, layer.norm2)));
    if (trace) (*trace)[name] = x;
  }
  return m.rmsNorm(x, m.finalNorm);
}

// Encoding only the n real tokens gives the same rows as the reference's call on the
// 512-token padded sequence with its mask, because for every real query row i:
//  - the position bias of (i, j) depends only on j − i, not on the sequence length;
//  - every padded key j gets q·k + lowest-float as its logit, whose exp underflows to exactly 0
//    beside the real keys' logits, so the softmax over 512 keys is the softmax over the n real
//    keys (the maximum is a real key's, the padded terms add exact zeros to the sum, and the
//    padded values are multiplied by exact zeros);
//  - everything else (embedding, norms, linears, FFN) acts on each row separately.
// So the only difference is the order of floating-point sums inside the matmuls (tested to
// stay at the float32 noise floor in tests/text/test_umt5_golden.cpp: encodeShortcut).
at::Tensor Umt5Encoder::encode(const std::vector<std::int64_t>& ids) const {
  if (ids.empty()) throw std::invalid_argument("Umt5Encoder::encode: no tokens (a prompt has at least its EOS)");
  const at::Tensor t = at::tensor(ids, at::TensorOptions().dtype(at::kLong)).unsqueeze(0);
  return forward(t)[0];
}

at::Tensor Umt5Encoder::encodePadded(const std::vector<std::int64_t>& ids, std::int64_t textLen) const {
  if (static_cast<std::int64_t>(ids.size()) > textLen)
    throw std::invalid_argument("Umt5Encoder::encodePadded: " + std::to_string(ids.size()) +
                                " tokens do not fit in text_len " + std::to_string(textLen));
  const at::Tensor rows = encode(ids);
  at::Tensor out = at::zeros({textLen, impl_->config.dim}, rows.options());
  out.narrow(0, 0, rows.size(0)).copy_(rows);
  return out;
}

}  // namespace shotchain::models
