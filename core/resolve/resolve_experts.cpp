// Two experts (docs/wan22.md §8): the boundary (the document's, else the family's), each expert's guidance, and
// which expert runs which of the shot's steps, as the sampler's ExpertSwitch will switch them.
#include "resolve/shot_resolution.h"
#include "sampling/sampler.h"

namespace shotchain::resolve {

ResolvedExperts resolveExperts(const Sequence& sequence, const ResolvedShot& shot, const ResolvedSequence& resolved) {
  const SamplerDefaults& sampler = sequence.settings.sampler;
  const Shot& document = sequence.shots[shot.index];
  const models::FamilyKnowledge* knowledge = resolved.models.dit.knowledge;
  ResolvedExperts experts;
  experts.familyBoundary = !sampler.boundary.has_value();
  experts.fraction = sampler.boundary.value_or(knowledge ? knowledge->expertBoundary : 0.0);
  experts.boundary = 1000.0 * experts.fraction;
  experts.highGuidance = document.guidanceHighNoise.value_or(sampler.guidanceHighNoise.value_or(shot.guidance));
  experts.switchStep = document.switchStep.value_or(-1);

  sampling::SamplerOptions options;
  options.steps = shot.steps;
  options.shift = shot.shift;
  if (shot.fewStep) options.fewStep = sampling::FewStepSampling{shot.fewStep->steps, sampling::FewStepUpdate::Euler};
  sampling::ExpertSwitch change;
  change.boundary = experts.boundary;
  change.switchStep = experts.switchStep;
  std::vector<std::int64_t> timesteps;
  try {
    timesteps = sampling::samplingSchedule(options).timesteps;
  } catch (const std::invalid_argument&) {
    return experts;  // steps or shift out of range: the document's rules say so
  }
  for (std::size_t i = 0; i < timesteps.size(); ++i) {
    const int expert = sampling::expertAt(change, timesteps[i], static_cast<int>(i));
    experts.highSteps += expert;
    if (experts.runs.empty() || experts.runs.back() != expert) experts.runs.push_back(expert);
  }
  return experts;
}

}  // namespace shotchain::resolve
