#include "render/shot_record.h"

#include <ATen/ATen.h>

#include "io/content_digest.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "render/output_layout.h"
#include "util/atomic_file.h"
#include "util/bounded_file.h"

namespace shotchain::render {
namespace {

constexpr const char* kTailFormat = "shotchain-shot-tail-v1";

}  // namespace

void writeShotRecord(const std::filesystem::path& shotDir, const ShotRecord& record) {
  std::filesystem::create_directories(shotDir);
  util::writeFileAtomically(shotRecordPath(shotDir), shotRecordText(record));
}

std::optional<ShotRecord> readShotRecord(const std::filesystem::path& shotDir) {
  if (!util::regularFileProblem(shotRecordPath(shotDir), 16u << 20).empty()) return std::nullopt;  // rendered again
  try {
    return parseShotRecord(util::readRegularFile(shotRecordPath(shotDir), 16u << 20));
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

void writeShotTail(const std::filesystem::path& shotDir, const ShotTail& tail) {
  std::filesystem::create_directories(shotDir);
  io::saveSafetensors(tailLatentPath(shotDir),
                      {{"tail_latent", tail.latent.to(at::kCPU, at::kFloat).contiguous()},
                       {"last_frame", tail.lastFrame.to(at::kCPU, at::kFloat).contiguous()}},
                      {{"format", kTailFormat}, {"key", tail.key}});
}

std::optional<ShotTail> readShotTail(const std::filesystem::path& shotDir, c10::Device device) {
  const std::filesystem::path path = tailLatentPath(shotDir);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  try {
    const io::WeightSet weights = io::WeightSet::open(path);
    const auto& metadata = weights.metadata();
    const auto format = metadata.find("format");
    if (format == metadata.end() || format->second != kTailFormat) return std::nullopt;
    ShotTail tail;
    tail.latent = weights.load("tail_latent", at::kFloat).to(device).clone();
    tail.lastFrame = weights.load("last_frame", at::kFloat).to(device).clone();
    const auto key = metadata.find("key");
    tail.key = key == metadata.end() ? std::string() : key->second;
    return tail;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool shotTailPresent(const std::filesystem::path& shotDir) {
  std::error_code error;
  if (!std::filesystem::exists(tailLatentPath(shotDir), error)) return false;
  try {
    const io::WeightSet weights = io::WeightSet::open(tailLatentPath(shotDir));
    const auto format = weights.metadata().find("format");
    return format != weights.metadata().end() && format->second == kTailFormat &&
           weights.find("tail_latent") != nullptr && weights.find("last_frame") != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

bool framesComplete(const std::filesystem::path& shotDir, int count) {
  std::error_code error;
  for (int i = 0; i < count; ++i)
    if (!std::filesystem::is_regular_file(framePath(shotDir, i), error)) return false;
  return count > 0;
}

void sealShotRecord(const std::filesystem::path& shotDir, ShotRecord& record, bool frames) {
  record.tailDigest = io::bytesDigest(tailLatentPath(shotDir));
  record.frameDigests.clear();
  if (frames)
    for (int i = 0; i < record.framesWritten; ++i) try {
        record.frameDigests.push_back(io::bytesDigest(framePath(shotDir, i)));
      } catch (const std::exception&) {
        record.frameDigests.emplace_back();  // not written (the writer said so): the shot is never re-used
      }
}

std::string shotFolderProblem(const std::filesystem::path& shotDir, const ShotRecord& record, bool frames) {
  namespace fs = std::filesystem;
  std::error_code error;
  const auto plain = [&error](const fs::path& path, fs::file_type type) {
    return fs::symlink_status(path, error).type() == type;
  };
  if (!plain(shotDir, fs::file_type::directory)) return "the shot's folder is not a folder of its own";
  if (record.tailDigest.empty()) return "shot.json holds no digests (written by an older ShotChain)";
  const auto differs = [&](const fs::path& path, const std::string& digest) -> std::string {
    const std::string name = path.lexically_relative(shotDir).generic_string();
    if (!plain(path, fs::file_type::regular)) return name + " is missing or not a file of its own";
    try {
      if (io::bytesDigest(path) != digest) return name + " differs from what was rendered";
    } catch (const std::exception&) {
      return name + " is empty or cannot be read";
    }
    return {};
  };
  if (std::string problem = differs(tailLatentPath(shotDir), record.tailDigest); !problem.empty()) return problem;
  if (!frames) return {};
  if (record.framesWritten <= 0 || record.frameDigests.size() != static_cast<std::size_t>(record.framesWritten))
    return "shot.json counts " + std::to_string(record.framesWritten) + " frames and holds " +
           std::to_string(record.frameDigests.size()) + " frame digests";
  if (!plain(shotDir / "frames", fs::file_type::directory)) return "frames is not a folder of its own";
  for (int i = 0; i < record.framesWritten; ++i)
    if (std::string problem = differs(framePath(shotDir, i), record.frameDigests[static_cast<std::size_t>(i)]);
        !problem.empty())
      return problem;
  return {};
}

}  // namespace shotchain::render
