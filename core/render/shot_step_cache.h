#pragma once

// A shot's step cache, set up from the document (sampler.cache, or the shot's cache) and the model,
// or the reason it is off (docs/step-cache.md).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "render/render_events.h"
#include "sequence/sequence.h"

namespace shotchain::models {
class VideoDiffusionModel;
}  // namespace shotchain::models

namespace shotchain::sampling {
class StepCache;
}  // namespace shotchain::sampling

namespace shotchain::render {

struct ShotStepCache {
  std::shared_ptr<sampling::StepCache> cache;  // null: nothing to consult
  std::optional<StepCacheFigures> figures;     // set when the shot's policy is not off, or when calibrating
  std::vector<std::string> warnings;           // for the render's warnings (e.g. no ratios for magcache)
};

const StepCacheSettings& effectiveCache(const Shot& shot, const SamplerDefaults& defaults);
double effectiveThreshold(const StepCacheSettings& cache);

struct ShotCacheContext {
  const models::VideoDiffusionModel* dit = nullptr;
  int steps = 0;
  bool stream = false;    // continuity mode stream (chunks over a KV cache)
  bool staggered = false; // diffusion forcing with ar_step: the frames on staggered schedules
  bool calibrate = false; // `calibrate-cache`: record every step, skip none
  std::filesystem::path sequenceDirectory;
  bool fewStep = false;   // a few-step distilled schedule (sampler.few_step)
  bool twoExperts = false;  // model.dit_high_noise: a residual of one expert says nothing of the other's
};

// Throws std::runtime_error naming the calibration file and field when it cannot be read.
ShotStepCache shotStepCache(const Shot& shot, const SamplerDefaults& defaults, const ShotCacheContext& context);
// Before any work: every calibration file the shots first..last read can be read; throws RenderError
// naming the document field and the file.
void requireReadableCalibrations(const Sequence& sequence, const std::filesystem::path& sequenceDirectory, int first, int last);
// The figures once the shot is sampled (computed and skipped passes, the pattern).
void countPasses(ShotStepCache& shot);

}  // namespace shotchain::render
