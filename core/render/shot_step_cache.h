#pragma once

// A shot's step cache as resolved (resolve/resolved_shot.h): the sampler's StepCache and the figures its
// record and the report show (docs/step-cache.md).
#include <memory>
#include <optional>

#include "render/render_events.h"
#include "resolve/resolved_shot.h"

namespace shotchain::sampling {
class StepCache;
}  // namespace shotchain::sampling

namespace shotchain::render {

struct ShotStepCache {
  std::shared_ptr<sampling::StepCache> cache;  // null: nothing to consult
  std::optional<StepCacheFigures> figures;     // set when the shot's policy is not off, or when calibrating
};

// `calibrate` (`calibrate-cache`): every step computed and recorded, skipping none, wherever a step cache could run.
ShotStepCache shotStepCache(const resolve::ResolvedShot& shot, bool calibrate);
// The figures once the shot is sampled (computed and skipped passes, the pattern).
void countPasses(ShotStepCache& shot);

}  // namespace shotchain::render
