// What a shot's sampling did, for its record: a few-step schedule's timesteps and passes, two experts' steps
// and moves, where an image-to-video shot's image came from.
#include <algorithm>

#include "render/shot_pass.h"
#include "render/shot_record.h"

namespace shotchain::render {

void addSamplingFigures(ShotRecord& record, const PreparedShot& prepared, const SampledShot& sampled) {
  if (prepared.sampler.fewStep) {
    FewStepFigures figures;
    figures.steps = prepared.sampler.fewStep->steps;
    figures.update = prepared.sampler.fewStep->update == sampling::FewStepUpdate::Renoise ? "renoise" : "euler";
    for (const float t : sampled.result.schedule.fractionalTimesteps) figures.timesteps.push_back(t);
    figures.guidance = prepared.sampler.guidance;
    figures.ditPasses = sampled.ditPasses;
    record.fewStep = figures;
  }
  if (prepared.sampler.experts) {
    ExpertFigures figures;
    figures.boundary = prepared.sampler.experts->boundary;
    figures.experts = sampled.result.experts;
    figures.guidances = sampled.result.guidances;
    figures.timesteps.assign(
        sampled.result.schedule.timesteps.begin(),
        sampled.result.schedule.timesteps.begin() + static_cast<std::ptrdiff_t>(sampled.result.experts.size()));
    const auto low = std::find(figures.experts.begin(), figures.experts.end(), 0);
    figures.switchStep = low == figures.experts.end() ? -1 : static_cast<int>(low - figures.experts.begin());
    figures.imageCondition = prepared.imageConditionSource;
    figures.residency = sampled.expertResidency;
    figures.bytesMoved = sampled.expertBytes;
    figures.moveSeconds = sampled.expertSeconds;
    record.experts = figures;
  } else if (!prepared.imageConditionSource.empty()) {
    ExpertFigures figures;
    figures.imageCondition = prepared.imageConditionSource;
    record.experts = figures;
  }
}

}  // namespace shotchain::render
