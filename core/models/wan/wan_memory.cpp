#include "models/wan/wan_memory.h"

#include <algorithm>

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/kv_cache.h"
#include "models/wan/wan_vae_memory.h"

namespace shotchain::models {
namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); }

class WanDitMemory final : public DitMemoryModel {
 public:
  WanDitMemory(const WanConfig& config, c10::ScalarType loadDtype, std::uint64_t float8Elements = 0,
               std::uint64_t float8Rows = 0, std::uint64_t ggmlElements = 0, std::uint64_t ggmlBytes = 0,
               std::uint64_t ggmlTensors = 0)
      : config_(config),
        loadDtype_(loadDtype),
        float8Elements_(float8Elements),
        float8Rows_(float8Rows),
        ggmlElements_(ggmlElements),
        ggmlBytes_(ggmlBytes),
        ggmlTensors_(ggmlTensors) {}
  std::string family() const override { return config_.family(); }
  std::string variant() const override { return config_.variant(); }
  std::uint64_t parameterCount() const override { return config_.parameterCount(); }
  std::int64_t latentChannels() const override { return config_.outDim; }
  bool perFrameTimesteps() const override { return config_.takesPerFrameTimesteps(); }
  bool cleanFirstFrames() const override { return config_.modelType == "ti2v"; }
  std::int64_t imageConditionChannels() const override { return config_.imageConditionChannels(); }
  c10::ScalarType loadDtype() const override { return loadDtype_; }
  std::int64_t causalBlockSize() const override { return config_.causalBlockSize; }
  std::uint64_t kvCacheBytesPerFrame(c10::ScalarType dtype, std::int64_t branches, std::int64_t height,
                                     std::int64_t width) const override {
    const std::int64_t tokens = (height / config_.patch[1]) * (width / config_.patch[2]);
    return kvCacheBytes(config_.numLayers, branches, 1, tokens, config_.dim,
                        static_cast<std::int64_t>(c10::elementSize(dtype)));
  }
  std::uint64_t weightBytes(c10::ScalarType dtype) const override { return wanDitWeightBytes(config_, dtype); }
  std::uint64_t keptAsStoredSaving(c10::ScalarType dtype) const override {
    const std::uint64_t saved =
                            float8Elements_ * (c10::elementSize(dtype) - 1) + ggmlElements_ * c10::elementSize(dtype),
                        kept = float8Rows_ * 4 + ggmlBytes_ + ggmlTensors_ * 8;  // and each one's int64 type id
    return saved > kept ? saved - kept : 0;
  }
  // The live tensors, and a weight kept as stored dequantised for its call (the largest, the FFN's): an fp8 one
  // through float32, GGUF blocks a part at a time.
  std::uint64_t activationBytes(c10::ScalarType dtype, std::int64_t batch, const LatentShape& s) const override {
    const std::uint64_t size = c10::elementSize(dtype);
    const std::uint64_t dequantised = float8Elements_ > 0 ? largestWeight() * (4 + size)
                                      : ggmlElements_ > 0 ? largestWeight() * size
                                                          : 0;
    return estimateWanDitActivations(config_, dtype, batch, tokens(s)) + dequantised;
  }
  std::uint64_t hostMatmulWorkspace(c10::ScalarType dtype) const override {
    return largestWeight() * c10::elementSize(dtype);
  }
  std::int64_t tokens(const LatentShape& s) const override {
    return (s.frames / config_.patch[0]) * (s.height / config_.patch[1]) * (s.width / config_.patch[2]);
  }
  std::int64_t hiddenSize() const override { return config_.dim; }
  std::int64_t heads() const override { return config_.numHeads; }
  std::int64_t layers() const override { return config_.numLayers; }
  std::int64_t contextLength() const override { return config_.textLen; }

 private:
  std::uint64_t largestWeight() const { return u(config_.ffnDim) * u(config_.dim); }

  WanConfig config_;
  c10::ScalarType loadDtype_;
  std::uint64_t float8Elements_, float8Rows_;  // of the matmul weights stored as fp8 (their scales: a row each at most)
  std::uint64_t ggmlElements_, ggmlBytes_, ggmlTensors_;  // of the matmul weights stored as GGUF blocks
};

class WanVaeMemory final : public VaeMemoryModel {
 public:
  explicit WanVaeMemory(const WanVaeConfig& config) : config_(config) {}
  VaeGeometry geometry() const override { return {config_.zDim, config_.temporalFactor(), config_.spatialFactor()}; }
  std::string variant() const override { return config_.variant(); }
  std::uint64_t parameterCount() const override { return config_.parameterCount(); }
  std::uint64_t weightBytes(c10::ScalarType dtype) const override { return wanVaeWeightBytes(config_, dtype); }
  std::uint64_t decodeBytes(std::int64_t latentFrames, std::int64_t height, std::int64_t width, c10::ScalarType dtype,
                            const VaeTiling& tiling, bool wholeClip) const override {
    return estimateWanVaeDecode(config_, latentFrames, height, width, dtype, tiling, wholeClip).totalBytes();
  }
  VaeTiling chooseTiling(std::int64_t latentFrames, std::int64_t height, std::int64_t width, c10::ScalarType dtype,
                         std::uint64_t budgetBytes, bool wholeClip) const override {
    return chooseWanVaeTiling(config_, latentFrames, height, width, dtype, budgetBytes, wholeClip);
  }

 private:
  WanVaeConfig config_;
};

}  // namespace

std::shared_ptr<const DitMemoryModel> wanDitMemory(const WanConfig& config, c10::ScalarType loadDtype) {
  return std::make_shared<WanDitMemory>(config, loadDtype);
}

std::shared_ptr<const DitMemoryModel> wanDitMemoryFloat8(const WanConfig& c) {
  const std::uint64_t d = u(c.dim), f = u(c.ffnDim), layers = u(c.numLayers);
  const std::uint64_t elements = layers * (8 * d * d + 2 * d * f) + d * u(c.textDim) + d * d;
  const std::uint64_t rows = layers * (8 * d + f + d) + 2 * d;
  return std::make_shared<WanDitMemory>(c, c10::kBFloat16, elements, rows);
}

std::shared_ptr<const DitMemoryModel> wanDitMemory(const io::WeightSet& weights) {
  const WanConfig config = detectWanConfig(weights).config;
  std::uint64_t elements = 0, rows = 0, ggmlElements = 0, ggmlBytes = 0, ggmlTensors = 0;
  for (const io::WeightInfo& info : weights.weights()) {
    // The matmul weights WanModel keeps as stored: the blocks' linears and the text embedding's.
    if (info.shape.size() != 2 || !(info.name.starts_with("blocks.") || info.name.starts_with("text_embedding.")) ||
        !info.name.ends_with(".weight"))
      continue;
    if (weights.storedAsFloat8(info.name)) {
      elements += info.shape[0] * info.shape[1];
      rows += info.shape[0];
    } else if (weights.storedAsGgml(info.name)) {
      ggmlElements += info.shape[0] * info.shape[1];
      ggmlBytes += info.bytes;
      ++ggmlTensors;
    }
  }
  return std::make_shared<WanDitMemory>(config, io::matmulLoadDtype(weights.find(kWanMatmulProbe), true), elements,
                                        rows, ggmlElements, ggmlBytes, ggmlTensors);
}

std::shared_ptr<const VaeMemoryModel> wanVaeMemory(const WanVaeConfig& config) {
  return std::make_shared<WanVaeMemory>(config);
}

std::uint64_t wanDitWeightBytes(const WanConfig& c, c10::ScalarType dtype) {
  const std::uint64_t d = u(c.dim), f = u(c.ffnDim), s = c10::elementSize(dtype);
  const std::uint64_t headOut = u(c.outDim * c.patchVolume());
  std::uint64_t matmul = d * u(c.inDim * c.patchVolume()) + d;  // patch embedding
  matmul += d * u(c.textDim) + d + d * d + d;                   // text embedding
  matmul += u(c.numLayers) * (8 * (d * d + d) + (d * f + f) + (f * d + d));
  std::uint64_t f32 = d * u(c.freqDim) + d + d * d + d + 6 * d * d + 6 * d;  // time MLP and projection
  f32 += u(c.numLayers) * (6 * d + (c.qkNorm ? 4 * d : 0) + (c.crossAttnNorm ? 2 * d : 0));
  f32 += 2 * d + headOut * d + headOut;
  if (c.hasImageEmbedding()) {  // img_emb, and k_img / v_img / norm_k_img in every block
    const std::uint64_t i = u(c.imageDim);
    matmul += i * i + i + d * i + d + u(c.numLayers) * 2 * (d * d + d);
    f32 += 2 * i + 2 * d + u(c.imagePositionTokens) * i + (c.qkNorm ? u(c.numLayers) * d : 0);
  }
  return matmul * s + f32 * 4;
}

std::uint64_t wanVaeWeightBytes(const WanVaeConfig& config, c10::ScalarType dtype) {
  return config.parameterCount() * c10::elementSize(dtype);
}

// What WanModel::forward keeps alive at its peak (wan_model.cpp), per token row of the batch:
//  - for the whole pass: the float64 RoPE cos/sin, the float32 padded context and its embedding;
//  - inside a block, five float32 rows of dim (x, the self/cross attention outputs, the modulated
//    input, ffn.2's output) and then either the FFN's two ffnDim rows at the compute dtype, or the
//    attention's q, k, v, output at the compute dtype plus the fused attention's own copies of one
//    sample (no score matrix).
// Calibrated against the counting CPU allocator: tests/memory test_memory_plan (±30%; 0.99–1.1 there).
std::uint64_t estimateWanDitActivations(const WanConfig& c, c10::ScalarType dtype, std::int64_t batch,
                                        std::int64_t tokens) {
  constexpr std::uint64_t kFloat32Rows = 5;
  const std::uint64_t s = c10::elementSize(dtype), b = u(batch), n = u(tokens), d = u(c.dim), f = u(c.ffnDim);
  const std::uint64_t rows = b * n;
  const std::uint64_t ffnPhase = rows * (kFloat32Rows * 4 * d + 2 * s * d + 2 * s * f);
  // scaled_dot_product_attention's fused kernels never hold the scores: one sample at a time (the loop
  // in models/attention.cpp), its q, k, v and output in head-major copies plus a float accumulator.
  const std::uint64_t fusedAttention = n * d * (4 * s + 4);
  const std::uint64_t attentionPhase = rows * (kFloat32Rows * 4 * d + 4 * s * d) + fusedAttention;
  // The context: the text rows, and a Wan 2.1 I2V / FLF2V's block's k_img and v_img of its image rows (257 a
  // picture; img_emb's own pass is over before the blocks).
  const std::uint64_t imageRows = b * u(c.imageTokens());
  const std::uint64_t wholePass =
      rows * 8 * u(c.headDim()) + b * u(c.textLen) * (4 * u(c.textDim) + 4 * d + s * d) + imageRows * 2 * s * d;
  return wholePass + std::max(ffnPhase, attentionPhase);
}

}  // namespace shotchain::models
