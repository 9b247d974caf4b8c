#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "render/shot_record_json.h"

namespace shotchain::render {

// Atomic writes. Throws FileWriteError naming the file.
void writeShotRecord(const std::filesystem::path& shotDir, const ShotRecord& record);
// nullopt when the file is missing or not a record of this format (the shot is then rendered again).
std::optional<ShotRecord> readShotRecord(const std::filesystem::path& shotDir);

// tail_latent.safetensors: the shot's final latent [C, F, h, w] and its last written frame
// [3, H, W] (float32, −1…1), so a later render can hand off from this shot without it in memory.
struct ShotTail {
  at::Tensor latent;
  at::Tensor lastFrame;
  std::string key;
};
void writeShotTail(const std::filesystem::path& shotDir, const ShotTail& tail);
std::optional<ShotTail> readShotTail(const std::filesystem::path& shotDir, c10::Device device);
// True when the tail file is there and of this format (reads its header only, no tensor data).
bool shotTailPresent(const std::filesystem::path& shotDir);

// True when frames/000001.png … frames/<count>.png all exist.
bool framesComplete(const std::filesystem::path& shotDir, int count);

// Puts the digests of what the shot's folder holds now into its record: the tail and, with `frames`, every
// frame written.
void sealShotRecord(const std::filesystem::path& shotDir, ShotRecord& record, bool frames);
// Why the shot's folder no longer holds what its sealed record says, so that it must be rendered again
// ("frames/000012.png differs from what was rendered"), or empty when it does: the frames (with `frames`) and
// the tail are plain files in plain folders (no symbolic links), each with the digest written in the record.
std::string shotFolderProblem(const std::filesystem::path& shotDir, const ShotRecord& record, bool frames);

}  // namespace shotchain::render
