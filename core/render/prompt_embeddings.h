#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "models/model_set_facts.h"
#include "render/prompt_embedding_folder.h"

namespace shotchain::render {

// What a text encoder made of each prompt, kept on disk so that a render whose prompts were all encoded before
// never loads the encoder (umT5-XXL: 6.7 to 11 GB). An embedding is keyed by everything it comes from: the
// bytes of the encoder and tokenizer files, the encoder's family, the device kind it ran on, the tokens the DiT
// takes, the cache's format, and the prompt. It is stored as the encoder gave it (float32 rows of the real
// tokens), so a cached prompt gives what encoding it again would, bit for bit.
class PromptEmbeddings {
 public:
  // `folder` empty: nothing is kept (every prompt is encoded).
  PromptEmbeddings(std::filesystem::path folder, const models::ModelSetFacts& models, c10::Device device);

  // The embedding of `prompt` on the device, when it is kept and whole.
  std::optional<at::Tensor> find(const std::string& prompt) const;
  // Keeps it (atomically; a folder that cannot be written keeps nothing, and the render goes on).
  void store(const std::string& prompt, const at::Tensor& embedding) const;
  // Removes the least recently used embeddings until the folder holds at most `maxBytes`.
  void prune(std::uint64_t maxBytes = kDefaultPromptEmbeddingBytes) const;

 private:
  std::filesystem::path fileOf(const std::string& prompt) const;

  std::filesystem::path folder_;
  std::string encoder_;  // everything of the key but the prompt
  std::int64_t maxTokens_ = 0;
  c10::Device device_;
};

}  // namespace shotchain::render
