#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// Prompt → the DiT's context, whatever the encoder family. Loaded for a render's prompts and
// released before the DiT needs the memory. Implemented by Umt5TextEncoder.
class TextEncoder {
 public:
  virtual ~TextEncoder() = default;
  // [n, text_dim] float32 rows of the real tokens; the DiT pads them.
  virtual at::Tensor encode(const std::string& prompt) const = 0;
  virtual void unload() = 0;
};

}  // namespace shotchain::models
