#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "continuity/cut_metrics.h"
#include "render/render_events.h"

namespace shotchain::render {

// shot.json: what a finished shot was rendered from and what it measured. Its key decides whether
// a later render may re-use the shot.
struct ShotRecord {
  int index = 0;
  std::string id;
  std::string name;
  std::string key;
  std::string settingsJson;  // the shot as the document writes it
  std::string resolvedJson;  // the settings it was rendered with, as the resolver decided them
  int framesWritten = 0;
  int framesDropped = 0;  // leading decoded frames left out (latent_overlap repeats, latent priming)
  // What the shot started from (continuity::Conditioning::source): "noise", "start_image", "handoff", …
  std::string conditionedOn;
  double sampleSeconds = 0;
  double decodeSeconds = 0;
  double seconds = 0;
  double firstFrameSeconds = 0;
  std::optional<StreamFigures> stream;
  std::optional<StepCacheFigures> cache;
  std::optional<LoraFigures> loras;
  std::optional<FewStepFigures> fewStep;
  std::optional<ExpertFigures> experts;
  std::vector<double> stepSeconds;
  std::optional<continuity::CutMetrics> cutIn;  // the cut into this shot
  std::vector<continuity::KeyframeLanding> keyframes;
  std::string statsJson;               // per-shot statistics the next cut is measured against (JSON text)
  std::vector<std::string> fallbacks;  // what the memory manager fell back to, in words
};

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

}  // namespace shotchain::render
