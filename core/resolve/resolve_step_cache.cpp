// A shot's step cache (docs/step-cache.md): the policy the document asks, whether it runs for this shot (the
// policy table's limits against the shot's sampling), and where its numbers come from.
#include "resolve/shot_resolution.h"
#include "sampling/cache_calibration.h"
#include "sequence/step_cache_policies.h"
#include "sequence/validation.h"

namespace shotchain::resolve {
namespace {

// Why a policy with `limits` does not run for this shot, or "" when it does.
std::string offReason(unsigned limits, const ResolvedShot& shot, const ResolvedSequence& resolved,
                      const ResolveContext& context) {
  if ((limits & kCacheNotWithStream) && shot.sampling == SamplingKind::KvStream)
    return "stream shots sample a few steps per chunk over a KV cache; not applied";
  if ((limits & kCacheNotWithTwoExperts) && resolved.twoExperts)
    return "two experts (model.dit_high_noise) switch within the shot, and one expert's residual says nothing of the "
           "other's; not applied";
  if ((limits & kCacheNotWithFewStep) && shot.fewStep)
    return "a few-step schedule computes every one of its " + std::to_string(shot.steps) + " steps; not applied";
  if ((limits & kCacheNotWithStagger) && shot.sampling == SamplingKind::PerFrame && shot.arStep != 0)
    return "sampler.ar_step staggers the frames' timesteps (diffusion forcing); not applied";
  if ((limits & kCacheNotOverRanks) && context.ranks > 1)
    return "not with the DiT spread over ranks (each rank would decide on its own part of the batch)";
  return {};
}

}  // namespace

ResolvedStepCache resolveStepCache(const Sequence& sequence, const ResolvedShot& shot, const ResolvedSequence& resolved,
                                   const ResolveContext& context, Problems& problems) {
  const Shot& document = sequence.shots[shot.index];
  const StepCacheSettings& settings = document.cache ? *document.cache : sequence.settings.sampler.cache;
  const StepCachePolicyTraits& traits = traitsOf(settings.policy);
  ResolvedStepCache cache;
  cache.policy = settings.policy;
  cache.field = document.cache ? shotPath(shot.index, "cache") : std::string("sampler.cache");
  constexpr unsigned kEveryLimit =
      kCacheNotWithStream | kCacheNotWithFewStep | kCacheNotWithTwoExperts | kCacheNotWithStagger | kCacheNotOverRanks;
  cache.limit = offReason(kEveryLimit, shot, resolved, context);
  if (settings.policy == StepCachePolicy::Off) return cache;
  cache.threshold = settings.threshold.value_or(traits.defaultThreshold);
  cache.warmupSteps = warmupSteps(traits, shot.steps);
  const auto off = [&](std::string why) {
    cache.off = std::move(why);
    if (document.enabled)
      problems.warning(cache.field + ".policy",
                       std::string("step cache ") + traits.name + " is off for this shot: " + cache.off);
    return cache;
  };
  if (std::string why = offReason(traits.cannotRunWith, shot, resolved, context); !why.empty()) return off(why);

  const models::DitFacts& dit = resolved.models.dit;
  if (traits.calibration != CalibrationNeed::Online && !settings.calibration.empty()) {
    cache.calibration = documentFile(context, settings.calibration);
    std::error_code error;
    if (!std::filesystem::exists(cache.calibration, error)) {
      problems.missing(context, cache.field + ".calibration", "\"" + settings.calibration + "\" does not exist");
      return off(settings.calibration + " is not there");
    }
    try {
      const sampling::CacheCalibration calibration = sampling::readCacheCalibration(cache.calibration);
      cache.magCacheRatios = calibration.magCacheRatios;
      cache.teaCacheCoefficients = calibration.teaCacheCoefficients;
      cache.source =
          "calibration " + cache.calibration.filename().string() + " (" + std::to_string(calibration.steps) + " steps)";
      if (!calibration.model.empty() && !resolved.models.assumed && calibration.model != dit.description &&
          document.enabled)
        problems.warning(cache.field + ".calibration",
                         "was measured on " + calibration.model + ", not on this model (" + dit.description + ")");
    } catch (const std::exception& e) {
      problems.error(cache.field + ".calibration", e.what());
      return off(settings.calibration + " cannot be read");
    }
    if (traits.calibration == CalibrationNeed::Required && cache.magCacheRatios.empty())
      return off(settings.calibration + " holds no magcache_ratios");
  } else if (traits.calibration != CalibrationNeed::Online) {
    const models::PublishedCacheTable* table =
        dit.knowledge ? models::publishedCacheTable(*dit.knowledge, dit.variant) : nullptr;
    if (table) {
      cache.magCacheRatios.assign(table->magCacheRatios.begin(), table->magCacheRatios.end());
      cache.teaCacheCoefficients.assign(table->teaCacheCoefficients.begin(), table->teaCacheCoefficients.end());
      cache.source = "published: " + dit.description;
    } else if (traits.calibration == CalibrationNeed::Required) {
      return off(std::string(traits.name) + " needs numbers measured on this model (" + dit.description +
                 "): run `shotchain calibrate-cache` and set cache.calibration");
    } else {
      cache.source = traits.onlineSource;
    }
  } else {
    cache.source = traits.onlineSource;
    if (!settings.calibration.empty() && document.enabled)
      problems.warning(cache.field + ".calibration",
                       std::string("is not read by ") + traits.name + " (it measures its numbers online)");
  }
  cache.applies = true;
  cache.residualTensors = traits.residualTensors;
  return cache;
}

}  // namespace shotchain::resolve
