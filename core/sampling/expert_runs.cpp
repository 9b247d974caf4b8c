#include "sampling/expert_runs.h"

#include "sampling/sampler.h"

namespace shotchain::sampling {
namespace {

// The shot's timesteps and its switch, as the shot pass builds them.
struct ShotExperts {
  std::vector<std::int64_t> timesteps;
  ExpertSwitch experts;
};

ShotExperts shotExperts(const Shot& shot, const SamplerDefaults& defaults, bool imageToVideo) {
  SamplerOptions options;
  options.steps = shot.steps.value_or(defaults.steps);
  options.shift = shot.shift.value_or(defaults.shift);
  if (const FewStepSettings& fewStep = effectiveFewStep(shot, defaults); fewStep.on())
    options.fewStep = FewStepSampling{fewStep.steps, FewStepUpdate::Euler};
  ShotExperts out;
  out.timesteps = samplingSchedule(options).timesteps;
  out.experts.boundary = 1000.0 * defaults.boundary.value_or(defaultExpertBoundary(imageToVideo));
  out.experts.switchStep = shot.switchStep.value_or(-1);
  return out;
}

}  // namespace

std::vector<int> expertRuns(const Shot& shot, const SamplerDefaults& defaults, bool imageToVideo) {
  const ShotExperts s = shotExperts(shot, defaults, imageToVideo);
  std::vector<int> runs;
  for (std::size_t i = 0; i < s.timesteps.size(); ++i)
    if (const int expert = expertAt(s.experts, s.timesteps[i], static_cast<int>(i)); runs.empty() || runs.back() != expert)
      runs.push_back(expert);
  return runs;
}

int switchStepOf(const Shot& shot, const SamplerDefaults& defaults, bool imageToVideo) {
  if (shot.switchStep) return *shot.switchStep;
  const ShotExperts s = shotExperts(shot, defaults, imageToVideo);
  int high = 0;
  for (const std::int64_t t : s.timesteps) high += expertAt(s.experts, t);
  return high;
}

void addExpertRuns(PlanRequest& request, const Sequence& sequence) {
  if (!request.ditHighNoise) return;
  const bool imageToVideo = request.dit->imageConditionChannels() > 0;
  std::size_t k = 0;
  for (const Shot& shot : sequence.shots) {
    if (!shot.enabled) continue;
    if (k < request.shots.size()) request.shots[k++].expertRuns = expertRuns(shot, sequence.settings.sampler, imageToVideo);
  }
}

}  // namespace shotchain::sampling
