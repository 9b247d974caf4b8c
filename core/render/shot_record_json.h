#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "continuity/cut_metrics.h"
#include "render/render_events.h"

// Torch-free: the record's text alone, for its readers and its fuzzer.
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
  // What the folder held when the shot was finished (sealShotRecord): each frame's and the tail's digest.
  std::vector<std::string> frameDigests;
  std::string tailDigest;
};

// shot.json's text for `record` (format "shotchain.shot/1").
std::string shotRecordText(const ShotRecord& record);
// The record in `text`; nullopt when it is not one of this format, or damaged (the shot is then rendered again).
std::optional<ShotRecord> parseShotRecord(std::string_view text);

}  // namespace shotchain::render
