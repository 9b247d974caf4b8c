#include "models/clip_vit/clip_vision.h"

#include <map>
#include <stdexcept>

#include <ATen/ATen.h>

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/attention.h"
#include "models/clip_vit/clip_vision_names.h"
#include "models/detection_problems.h"

namespace shotchain::models {
namespace {

struct Linear {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor& x) const { return at::linear(x.to(weight.scalar_type()), weight, bias); }
};

struct Block {
  at::Tensor norm1Weight, norm1Bias, norm2Weight, norm2Bias;
  Linear qkv, proj, fc1, fc2;
};

struct ParamSpec {
  std::string name;
  std::vector<std::int64_t> shape;  // as stored in the file's naming
  bool matmul;
};

// The tower's tensors in the file's naming and shapes (HF stores the class token as [dim] and the position table
// as [tokens, dim]; open-clip as [1, 1, dim] and [1, tokens, dim]).
std::vector<ParamSpec> parameterSpecs(const ClipVisionConfig& c, ClipVisionNaming naming) {
  const std::int64_t d = c.dim;
  const bool hf = naming == ClipVisionNaming::HuggingFace;
  std::vector<ParamSpec> specs{
      {"patch_embedding.weight", {d, 3, c.patchSize, c.patchSize}, true},
      {"cls_embedding", hf ? std::vector<std::int64_t>{d} : std::vector<std::int64_t>{1, 1, d}, false},
      {"pos_embedding", hf ? std::vector<std::int64_t>{c.tokens(), d} : std::vector<std::int64_t>{1, c.tokens(), d},
       false},
      {"pre_norm.weight", {d}, false},
      {"pre_norm.bias", {d}, false},
  };
  auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in) {
    specs.push_back({name + ".weight", {out, in}, true});
    specs.push_back({name + ".bias", {out}, true});
  };
  for (std::int64_t i = 0; i < c.numLayers; ++i) {
    const std::string p = "transformer." + std::to_string(i) + ".";
    for (const char* norm : {"norm1", "norm2"}) {
      specs.push_back({p + norm + ".weight", {d}, false});
      specs.push_back({p + norm + ".bias", {d}, false});
    }
    if (hf) {
      for (const char* part : {"q", "k", "v"}) linear(p + "attn." + part, d, d);
    } else {
      linear(p + "attn.to_qkv", 3 * d, d);
    }
    linear(p + "attn.proj", d, d);
    linear(p + "mlp.0", c.mlpDim, d);
    linear(p + "mlp.2", d, c.mlpDim);
  }
  return specs;
}

}  // namespace

struct ClipVisionEncoder::Impl {
  ClipVisionConfig config;
  ClipVisionNaming naming = ClipVisionNaming::OpenClip;
  at::ScalarType compute = at::kFloat;
  at::Device device = at::kCPU;
  at::Tensor patchWeight, classToken, positions, preNormWeight, preNormBias;  // [d], [tokens, d]
  std::vector<Block> blocks;
  std::uint64_t bytes = 0;

  void resolve(std::map<std::string, at::Tensor>& p) {
    for (const auto& [name, tensor] : p) bytes += tensor.nbytes();
    patchWeight = p.at("patch_embedding.weight");
    classToken = p.at("cls_embedding").reshape({config.dim});
    positions = p.at("pos_embedding").reshape({config.tokens(), config.dim});
    preNormWeight = p.at("pre_norm.weight");
    preNormBias = p.at("pre_norm.bias");
    for (std::int64_t i = 0; i < config.numLayers; ++i) {
      const std::string n = "transformer." + std::to_string(i) + ".";
      auto linear = [&](const std::string& name) {
        return Linear{p.at(n + name + ".weight"), p.at(n + name + ".bias")};
      };
      Block block{
          p.at(n + "norm1.weight"), p.at(n + "norm1.bias"), p.at(n + "norm2.weight"), p.at(n + "norm2.bias"), {},
          linear("attn.proj"),      linear("mlp.0"),        linear("mlp.2")};
      if (naming == ClipVisionNaming::HuggingFace) {
        block.qkv = {at::cat({p.at(n + "attn.q.weight"), p.at(n + "attn.k.weight"), p.at(n + "attn.v.weight")}),
                     at::cat({p.at(n + "attn.q.bias"), p.at(n + "attn.k.bias"), p.at(n + "attn.v.bias")})};
      } else {
        block.qkv = linear("attn.to_qkv");
      }
      blocks.push_back(std::move(block));
    }
  }

  at::Tensor layerNorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) const {
    return at::layer_norm(x, {config.dim}, weight, bias, config.eps);
  }

  // x [B, L, dim] float32 → x + attention(norm1(x)), then + mlp(norm2(·)).
  at::Tensor block(const Block& b, const at::Tensor& x) const {
    const std::int64_t batch = x.size(0), length = x.size(1);
    const at::Tensor qkv =
        b.qkv(layerNorm(x, b.norm1Weight, b.norm1Bias)).view({batch, length, 3, config.numHeads, config.headDim()});
    const at::Tensor attended = models::attention(qkv.select(2, 0), qkv.select(2, 1), qkv.select(2, 2));
    const at::Tensor h = x + b.proj(attended.reshape({batch, length, config.dim})).to(at::kFloat);
    return h + b.fc2(at::gelu(b.fc1(layerNorm(h, b.norm2Weight, b.norm2Bias)))).to(at::kFloat);
  }
};

ClipVisionEncoder::ClipVisionEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClipVisionEncoder::~ClipVisionEncoder() = default;
ClipVisionEncoder::ClipVisionEncoder(ClipVisionEncoder&&) noexcept = default;
ClipVisionEncoder& ClipVisionEncoder::operator=(ClipVisionEncoder&&) noexcept = default;

const ClipVisionConfig& ClipVisionEncoder::config() const { return impl_->config; }
ClipVisionNaming ClipVisionEncoder::naming() const { return impl_->naming; }
at::ScalarType ClipVisionEncoder::computeDtype() const { return impl_->compute; }
at::Device ClipVisionEncoder::device() const { return impl_->device; }
std::uint64_t ClipVisionEncoder::weightBytes() const { return impl_->bytes; }

ClipVisionEncoder ClipVisionEncoder::load(const io::WeightSet& weights, const ClipVisionLoadOptions& options) {
  const ClipVisionDetection detection = detectClipVisionConfig(weights);
  requireNoDetectionProblems(weights.label(), "a CLIP vision encoder", detection.problems);
  return load(weights, detection.config, options);
}

ClipVisionEncoder ClipVisionEncoder::load(const io::WeightSet& weights, const ClipVisionConfig& config,
                                          const ClipVisionLoadOptions& options) {
  config.check();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->device = options.device;
  impl->naming = weights.find(clipVisionStoredName("patch_embedding.weight", ClipVisionNaming::OpenClip))
                     ? ClipVisionNaming::OpenClip
                     : ClipVisionNaming::HuggingFace;
  const std::string probe = clipVisionStoredName("transformer.0.mlp.0.weight", impl->naming);
  if (options.computeDtype) {
    impl->compute = *options.computeDtype;
  } else if (const io::WeightInfo* info = weights.find(probe)) {
    impl->compute = io::matmulLoadDtype(info, /*halfStaysHalf=*/true);
  }
  io::StrictWeightLoader loader(weights, "a CLIP vision encoder with " + std::to_string(config.numLayers) +
                                             " blocks of width " + std::to_string(config.dim));
  for (const ParamSpec& spec : parameterSpecs(config, impl->naming))
    loader.require(spec.name, spec.shape, spec.matmul ? impl->compute : at::kFloat,
                   clipVisionStoredName(spec.name, impl->naming));
  const ClipVisionNaming naming = impl->naming;
  loader.tolerate([naming](const std::string& stored) { return clipVisionIgnorable(stored, naming); });
  std::map<std::string, at::Tensor> params = loader.finish(options.device);
  impl->resolve(params);
  return ClipVisionEncoder(std::move(impl));
}

at::Tensor ClipVisionEncoder::forward(const at::Tensor& pixels, std::int64_t blocks) const {
  const Impl& m = *impl_;
  const ClipVisionConfig& c = m.config;
  if (blocks < 0) blocks = c.numLayers - 1;
  if (blocks > c.numLayers) throw std::invalid_argument("ClipVisionEncoder::forward: more blocks than the tower has");
  if (pixels.dim() != 4 || pixels.size(1) != 3 || pixels.size(2) != c.imageSize || pixels.size(3) != c.imageSize)
    throw std::invalid_argument("ClipVisionEncoder::forward: pixels must be [B, 3, " + std::to_string(c.imageSize) +
                                ", " + std::to_string(c.imageSize) + "]");
  at::NoGradGuard noGrad;
  const at::Tensor patches =
      at::conv2d(pixels.to(m.device).to(m.compute), m.patchWeight, {}, {c.patchSize, c.patchSize});
  const at::Tensor tokens = patches.flatten(2).transpose(1, 2).to(at::kFloat);  // [B, patches, d]
  const at::Tensor cls = m.classToken.view({1, 1, c.dim}).expand({tokens.size(0), 1, c.dim});
  at::Tensor x = m.layerNorm(at::cat({cls, tokens}, 1) + m.positions.unsqueeze(0), m.preNormWeight, m.preNormBias);
  for (std::int64_t i = 0; i < blocks; ++i) x = m.block(m.blocks[static_cast<std::size_t>(i)], x);
  return x;
}

at::Tensor ClipVisionEncoder::encode(const at::Tensor& images, ClipPreprocessing mode) const {
  return forward(clipPreprocess(images.to(impl_->device), impl_->config.imageSize, mode));
}

}  // namespace shotchain::models
