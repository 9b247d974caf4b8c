#include "render/shot_step_cache.h"

#include "sampling/step_cache.h"

namespace shotchain::render {

ShotStepCache shotStepCache(const resolve::ResolvedShot& shot, bool calibrate) {
  ShotStepCache out;
  const resolve::ResolvedStepCache& resolved = shot.cache;
  if (resolved.policy == StepCachePolicy::Off && !calibrate) return out;
  StepCacheFigures figures;
  figures.policy = calibrate ? "calibration" : toString(resolved.policy);
  figures.threshold = calibrate ? 0.0 : resolved.threshold;
  figures.steps = shot.steps;
  figures.source = calibrate ? "" : resolved.source;
  figures.off = calibrate ? resolved.limit : resolved.off;
  out.figures = figures;
  if (!figures.off.empty()) return out;
  sampling::StepCacheConfig config;
  config.policy = resolved.policy;
  config.threshold = figures.threshold;
  config.steps = shot.steps;
  config.warmup = resolved.warmupSteps;
  config.record = calibrate;
  config.magCacheRatios = resolved.magCacheRatios;
  config.teaCacheCoefficients = resolved.teaCacheCoefficients;
  out.cache = std::make_shared<sampling::StepCache>(std::move(config));
  return out;
}

void countPasses(ShotStepCache& shot) {
  if (!shot.cache || !shot.figures) return;
  shot.figures->computedPasses = shot.cache->computedPasses();
  shot.figures->skippedPasses = shot.cache->skippedPasses();
  shot.figures->pattern = shot.cache->pattern(0);
}

}  // namespace shotchain::render
