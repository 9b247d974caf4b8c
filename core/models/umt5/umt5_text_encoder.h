#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/text_encoder.h"
#include "models/umt5/umt5.h"

namespace shotchain::models {

class Umt5Tokenizer;

struct Umt5TextEncoderOptions {
  Umt5LoadOptions model;
  // A spiece.model to use; empty = the `spiece_model` tensor embedded in the weights file.
  std::filesystem::path tokenizer;
  std::size_t textLen = 512;  // maximum tokens per prompt, EOS included
};

// Prompt → Wan context: the tokenizer front end and the UMT5 encoder, loaded together, used for
// every prompt (positive and negative) of a sequence, then unload()ed before the DiT needs the
// memory.
class Umt5TextEncoder final : public TextEncoder {
 public:
  // Throws (TokenizerError, std::runtime_error) naming the file.
  static Umt5TextEncoder load(const std::filesystem::path& weights, const Umt5TextEncoderOptions& options = {});

  // [n, dim] float32 rows of the real tokens (n ≤ textLen, EOS included); the DiT zero-pads them.
  at::Tensor encode(const std::string& prompt) const override;
  std::vector<at::Tensor> encode(const std::vector<std::string>& prompts) const;

  const Umt5Tokenizer& tokenizer() const;
  const Umt5Encoder& encoder() const;
  // Releases the encoder weights (the tokenizer, a few MB, is released too).
  void unload() override;
  bool isLoaded() const;

  ~Umt5TextEncoder() override;
  Umt5TextEncoder(Umt5TextEncoder&&) noexcept;
  Umt5TextEncoder& operator=(Umt5TextEncoder&&) noexcept;

 private:
  struct Impl;
  explicit Umt5TextEncoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shotchain::models
