#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// An image encoder whose features a DiT attends to (DitCapabilities::imageEmbeddingTokens), whatever its family:
// the CLIP vision tower of Wan 2.1 I2V / FLF2V.
class ImageEncoder {
 public:
  virtual ~ImageEncoder() = default;
  // Tokens of one picture's features (257 for ViT-H/14 at 224).
  virtual std::int64_t tokens() const = 0;
  // images [B, 3, H, W] in [−1, 1] → [B, tokens, dim] float32, preprocessed as the family's reference code does.
  virtual at::Tensor encode(const at::Tensor& images) const = 0;
};

}  // namespace shotchain::models
