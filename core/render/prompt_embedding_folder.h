#pragma once

// The folder of the prompt embeddings kept on disk (render/prompt_embeddings.h), as the studio's preferences show
// it. Torch-free.
#include <cstdint>
#include <filesystem>

namespace shotchain::render {

inline constexpr std::uint64_t kDefaultPromptEmbeddingBytes = std::uint64_t{1} << 30;

// util::userCacheDirectory()/prompt-embeddings (empty when there is no cache directory).
std::filesystem::path defaultPromptEmbeddingFolder();

struct FolderUsage {
  std::uint64_t bytes = 0;
  int files = 0;
};

// The embeddings `folder` holds (its .safetensors files); none for a folder that is missing.
FolderUsage promptEmbeddingUsage(const std::filesystem::path& folder);

// Removes them (nothing else of the folder); returns how many were removed.
int clearPromptEmbeddings(const std::filesystem::path& folder);

}  // namespace shotchain::render
