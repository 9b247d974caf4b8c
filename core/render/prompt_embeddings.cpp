#include "render/prompt_embeddings.h"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include <ATen/ATen.h>

#include "io/content_digest.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "util/digest.h"

namespace shotchain::render {
namespace {

namespace fs = std::filesystem;
constexpr const char* kFormat = "shotchain.prompt-embedding/1";

}  // namespace

PromptEmbeddings::PromptEmbeddings(fs::path folder, const models::ModelSetFacts& models, c10::Device device)
    : folder_(std::move(folder)), maxTokens_(models.dit.contextLength), device_(device) {
  if (folder_.empty()) return;
  try {
    const models::ModelFiles& files = models.files;
    encoder_ = std::string(kFormat) + "\n" + io::contentDigest(files.textEncoder) + "\n" +
               (files.tokenizer.empty() ? std::string("embedded") : io::contentDigest(files.tokenizer)) + "\n" +
               models.textEncoder.family + "\n" + c10::DeviceTypeName(device.type(), true) + "\n" +
               std::to_string(maxTokens_) + "\n";
  } catch (const std::exception&) {
    folder_.clear();  // the encoder's loader says what is wrong with its files
  }
}

fs::path PromptEmbeddings::fileOf(const std::string& prompt) const {
  return folder_ / (util::digestHex(encoder_ + prompt) + ".safetensors");
}

std::optional<at::Tensor> PromptEmbeddings::find(const std::string& prompt) const {
  if (folder_.empty()) return std::nullopt;
  const fs::path file = fileOf(prompt);
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return std::nullopt;
  try {
    const io::WeightSet set = io::WeightSet::open(file);
    const auto& metadata = set.metadata();
    const auto format = metadata.find("format");
    const auto stored = metadata.find("prompt");
    if (format == metadata.end() || format->second != kFormat || stored == metadata.end() || stored->second != prompt)
      return std::nullopt;
    const io::WeightInfo* info = set.find("embedding");
    if (info == nullptr || info->dtype != io::DType::F32) return std::nullopt;
    at::Tensor embedding = set.load("embedding", at::kFloat).clone();
    if (embedding.dim() != 2 || embedding.scalar_type() != at::kFloat || embedding.size(0) < 1 ||
        embedding.size(0) > maxTokens_ || !at::isfinite(embedding).all().item<bool>())
      return std::nullopt;
    fs::last_write_time(file, fs::file_time_type::clock::now(), error);  // recently used
    return embedding.to(device_);
  } catch (const std::exception&) {
    return std::nullopt;  // damaged: encoded again, and stored over it
  }
}

void PromptEmbeddings::store(const std::string& prompt, const at::Tensor& embedding) const {
  if (folder_.empty()) return;
  try {
    fs::create_directories(folder_);
    io::saveSafetensors(fileOf(prompt), {{"embedding", embedding.to(at::kCPU, at::kFloat).contiguous()}},
                        {{"format", kFormat}, {"prompt", prompt}});
  } catch (const std::exception&) {
    // Not kept: encoded again next time.
  }
}

void PromptEmbeddings::prune(std::uint64_t maxBytes) const {
  if (folder_.empty()) return;
  struct Kept {
    fs::path file;
    fs::file_time_type used;
    std::uintmax_t bytes;
  };
  std::vector<Kept> kept;
  std::uint64_t total = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder_, error)) {
    std::error_code entryError;
    if (entry.path().extension() != ".safetensors" || !entry.is_regular_file(entryError)) continue;
    kept.push_back({entry.path(), entry.last_write_time(entryError), entry.file_size(entryError)});
    total += kept.back().bytes;
  }
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.used < b.used; });
  for (const Kept& k : kept) {
    if (total <= maxBytes) break;
    if (fs::remove(k.file, error)) total -= k.bytes;
  }
}

}  // namespace shotchain::render
