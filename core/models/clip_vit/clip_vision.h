#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// The vision tower of a CLIP ViT (golden README §11.1): the image encoder of Wan 2.1 I2V and FLF2V. Every value
// but the head count and eps can be read from tensor shapes; ViT-H/14 is the default.
struct ClipVisionConfig {
  std::int64_t imageSize = 224;
  std::int64_t patchSize = 14;
  std::int64_t dim = 1280;
  std::int64_t mlpDim = 5120;
  std::int64_t numHeads = 16;
  std::int64_t numLayers = 32;
  double eps = 1e-5;

  std::int64_t headDim() const { return dim / numHeads; }
  // Patches plus the class token: 257 for ViT-H/14 at 224.
  std::int64_t tokens() const { return (imageSize / patchSize) * (imageSize / patchSize) + 1; }
  // "ViT-H/14", "tiny" (the golden test size) or "custom".
  std::string variant() const;
  // Throws std::invalid_argument describing the first inconsistency.
  void check() const;
};

// The two key namings of the same weights.
enum class ClipVisionNaming {
  OpenClip,  // Wan's open-clip-xlm-roberta checkpoint: visual.patch_embedding.weight, visual.transformer.N.attn.to_qkv…
  HuggingFace,  // HF CLIPVisionModel / ComfyUI clip_vision_h: vision_model.embeddings.*, …layers.N.self_attn.q_proj…
};

struct ClipVisionDetection {
  bool isClipVision = false;
  ClipVisionConfig config;
  ClipVisionNaming naming = ClipVisionNaming::OpenClip;
  std::string headsSource;            // "metadata" or "width" (the published towers' head count for that width)
  std::vector<std::string> problems;  // empty ⇒ loadable
};

// Reads the configuration from tensor names and shapes; the head count from a "config" JSON in the metadata
// ("num_heads" or "num_attention_heads") when there is one.
ClipVisionDetection detectClipVisionConfig(const io::WeightSet& weights);

struct ClipVisionLoadOptions {
  // Dtype of the matmuls and their weights; LayerNorms and the residual stream stay float32. nullopt = as
  // stored (F32 files float32, F16 half, BF16 bfloat16).
  std::optional<at::ScalarType> computeDtype;
  at::Device device = at::kCPU;
};

// How an image becomes the tower's input (golden README §11.1).
enum class ClipPreprocessing {
  Official,  // Wan's CLIPModel.visual: bicubic squash to imageSize², no antialias, float
  ComfyUi,   // ComfyUI's clip_preprocess (crop=center): shortest side to imageSize (bicubic, antialias), centre crop,
             // rounded to 8 bits
};

// images [B, 3, H, W] in [−1, 1] → [B, 3, size, size] float32, normalised with the CLIP mean and std.
at::Tensor clipPreprocess(const at::Tensor& images, std::int64_t size, ClipPreprocessing mode);

// The CLIP vision encoder as Wan uses it: patch embedding (no bias), class token, position embedding, pre-LN, pre-LN
// blocks with exact GELU; the output is the hidden state before the last block (use_31_block), with no post-norm
// and no head.
class ClipVisionEncoder {
 public:
  // Strict: every tensor the tower needs must be present with the right shape; the text tower, the post-norm, the
  // head / projection and the logit scale may be there and are ignored; anything else is an error. Throws
  // std::runtime_error naming the file and the tensor.
  static ClipVisionEncoder load(const io::WeightSet& weights, const ClipVisionLoadOptions& options = {});
  static ClipVisionEncoder load(const io::WeightSet& weights, const ClipVisionConfig& config,
                                const ClipVisionLoadOptions& options = {});

  const ClipVisionConfig& config() const;
  ClipVisionNaming naming() const;
  at::ScalarType computeDtype() const;
  at::Device device() const;
  std::uint64_t weightBytes() const;

  // pixels [B, 3, imageSize, imageSize] (preprocessed) → the residual stream after `blocks` blocks, [B, tokens, dim]
  // float32. blocks = −1: numLayers − 1 (what Wan feeds its DiT).
  at::Tensor forward(const at::Tensor& pixels, std::int64_t blocks = -1) const;
  // images [B, 3, H, W] in [−1, 1] → clipPreprocess, then forward(): [B, tokens, dim].
  at::Tensor encode(const at::Tensor& images, ClipPreprocessing mode = ClipPreprocessing::Official) const;

  ~ClipVisionEncoder();
  ClipVisionEncoder(ClipVisionEncoder&&) noexcept;
  ClipVisionEncoder& operator=(ClipVisionEncoder&&) noexcept;

 private:
  struct Impl;
  explicit ClipVisionEncoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shotchain::models
