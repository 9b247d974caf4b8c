#include "render/prompt_embedding_folder.h"

#include <vector>

#include "util/cache_directory.h"

namespace shotchain::render {
namespace {

namespace fs = std::filesystem;

std::vector<fs::directory_entry> embeddingFiles(const fs::path& folder) {
  std::vector<fs::directory_entry> files;
  std::error_code error;
  if (folder.empty()) return files;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    std::error_code entryError;
    if (entry.path().extension() == ".safetensors" && entry.is_regular_file(entryError)) files.push_back(entry);
  }
  return files;
}

}  // namespace

fs::path defaultPromptEmbeddingFolder() {
  const fs::path folder = util::userCacheDirectory();
  return folder.empty() ? fs::path() : folder / "prompt-embeddings";
}

FolderUsage promptEmbeddingUsage(const fs::path& folder) {
  FolderUsage usage;
  for (const fs::directory_entry& entry : embeddingFiles(folder)) {
    std::error_code error;
    const std::uintmax_t bytes = entry.file_size(error);
    if (error) continue;
    usage.bytes += bytes;
    ++usage.files;
  }
  return usage;
}

int clearPromptEmbeddings(const fs::path& folder) {
  int removed = 0;
  for (const fs::directory_entry& entry : embeddingFiles(folder)) {
    std::error_code error;
    if (fs::remove(entry.path(), error)) ++removed;
  }
  return removed;
}

}  // namespace shotchain::render
