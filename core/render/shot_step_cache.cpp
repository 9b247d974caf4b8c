#include "render/shot_step_cache.h"

#include <cmath>
#include <stdexcept>

#include "models/video_diffusion_model.h"
#include "render/renderer.h"
#include "sampling/cache_calibration.h"
#include "sampling/step_cache.h"
#include "sampling/step_cache_rules.h"
#include "sequence/validation.h"

namespace shotchain::render {
namespace {

sampling::CacheRule ruleOf(StepCachePolicy policy) {
  switch (policy) {
    case StepCachePolicy::MagCache: return sampling::CacheRule::MagCache;
    case StepCachePolicy::EasyCache: return sampling::CacheRule::EasyCache;
    case StepCachePolicy::FirstBlock: return sampling::CacheRule::FirstBlock;
    case StepCachePolicy::TeaCache:
    case StepCachePolicy::Off: break;
  }
  return sampling::CacheRule::TeaCache;
}

sampling::StepCacheDefaults defaultsOf(StepCachePolicy policy) {
  switch (policy) {
    case StepCachePolicy::MagCache: return sampling::kMagCacheDefaults;
    case StepCachePolicy::EasyCache: return sampling::kEasyCacheDefaults;
    case StepCachePolicy::FirstBlock: return sampling::kFirstBlockDefaults;
    case StepCachePolicy::TeaCache:
    case StepCachePolicy::Off: break;
  }
  return sampling::kTeaCacheDefaults;
}

}  // namespace

const StepCacheSettings& effectiveCache(const Shot& shot, const SamplerDefaults& defaults) {
  return shot.cache ? *shot.cache : defaults.cache;
}

double effectiveThreshold(const StepCacheSettings& cache) {
  return cache.threshold.value_or(defaultsOf(cache.policy).threshold);
}

ShotStepCache shotStepCache(const Shot& shot, const SamplerDefaults& defaults, const ShotCacheContext& context) {
  ShotStepCache out;
  const StepCacheSettings& settings = effectiveCache(shot, defaults);
  if (settings.policy == StepCachePolicy::Off && !context.calibrate) return out;
  StepCacheFigures figures;
  figures.policy = context.calibrate ? "calibration" : toString(settings.policy);
  figures.threshold = context.calibrate ? 0.0 : effectiveThreshold(settings);
  figures.steps = context.steps;
  const auto off = [&](std::string why) {
    if (!context.stream) out.warnings.push_back("step cache " + figures.policy + " is off: " + why);
    figures.off = std::move(why);
    out.figures = figures;
    return out;
  };
  if (context.stream) return off("stream shots sample a few steps per chunk over a KV cache; not applied");
  if (context.twoExperts)
    return off("two experts (model.dit_high_noise) switch within the shot, and one expert's residual says nothing of the "
               "other's; not applied");
  if (context.fewStep)
    return off("a few-step schedule computes every one of its " + std::to_string(context.steps) + " steps; not applied");
  if (context.staggered) return off("sampler.ar_step staggers the frames' timesteps (diffusion forcing); not applied");
  const bool blockStack = context.calibrate || settings.policy != StepCachePolicy::EasyCache;
  if (blockStack)
    if (std::string problem = context.dit->blockCacheProblem(); !problem.empty()) return off(problem);

  sampling::StepCacheConfig config;
  config.rule = ruleOf(settings.policy);
  config.threshold = figures.threshold;
  config.steps = context.steps;
  config.warmup = sampling::warmupSteps(defaultsOf(settings.policy).warmupShare, context.steps);
  config.record = context.calibrate;
  const std::string family = context.dit->family();
  const sampling::PublishedVariant variant = sampling::publishedVariantOf(family);
  if (!context.calibrate && !settings.calibration.empty() &&
      (settings.policy == StepCachePolicy::MagCache || settings.policy == StepCachePolicy::TeaCache)) {
    const std::filesystem::path file(settings.calibration);
    const std::filesystem::path path = file.is_absolute() ? file : context.sequenceDirectory / file;
    const sampling::CacheCalibration calibration = sampling::readCacheCalibration(path);
    config.magCacheRatios = calibration.magCacheRatios;
    config.teaCacheCoefficients = calibration.teaCacheCoefficients;
    figures.source = "calibration " + file.filename().string() + " (" + std::to_string(calibration.steps) + " steps)";
    if (!calibration.model.empty() && calibration.model != family)
      out.warnings.push_back("the cache calibration " + settings.calibration + " was measured on " +
                             calibration.model + ", not on this model (" + family + ")");
    if (settings.policy == StepCachePolicy::MagCache && config.magCacheRatios.empty())
      return off(settings.calibration + " holds no magcache_ratios");
  } else if (settings.policy == StepCachePolicy::MagCache) {
    config.magCacheRatios = sampling::publishedMagCacheRatios(variant);
    if (config.magCacheRatios.empty())
      return off("magcache needs ratios measured on this model (" + family +
                 "): run `shotchain calibrate-cache` and set cache.calibration");
    figures.source = "published: " + family;
  } else if (settings.policy == StepCachePolicy::TeaCache) {
    config.teaCacheCoefficients = sampling::publishedTeaCacheCoefficients(variant);
    figures.source = config.teaCacheCoefficients.empty() ? "uncalibrated: relative change of the modulation"
                                                         : "published: " + family;
  } else if (!context.calibrate) {
    figures.source = settings.policy == StepCachePolicy::EasyCache ? "online: transformation rate"
                                                                    : "online: first block's residual";
  }
  out.cache = std::make_shared<sampling::StepCache>(std::move(config));
  out.figures = figures;
  return out;
}

void requireReadableCalibrations(const Sequence& sequence, const std::filesystem::path& sequenceDirectory, int first, int last) {
  for (int i = first; i <= last; ++i) {
    const Shot& shot = sequence.shots[static_cast<std::size_t>(i)];
    const StepCacheSettings& cache = effectiveCache(shot, sequence.settings.sampler);
    if (!shot.enabled || cache.calibration.empty() ||
        (cache.policy != StepCachePolicy::MagCache && cache.policy != StepCachePolicy::TeaCache))
      continue;
    const std::filesystem::path file(cache.calibration);
    try {
      (void)sampling::readCacheCalibration(file.is_absolute() ? file : sequenceDirectory / file);
    } catch (const std::exception& error) {
      throw RenderError(shot.cache ? shotPath(static_cast<std::size_t>(i), "cache.calibration") : "sampler.cache.calibration",
                        error.what());
    }
  }
}

void countPasses(ShotStepCache& shot) {
  if (!shot.cache || !shot.figures) return;
  shot.figures->computedPasses = shot.cache->computedPasses();
  shot.figures->skippedPasses = shot.cache->skippedPasses();
  shot.figures->pattern = shot.cache->pattern(0);
}

}  // namespace shotchain::render
