// What a shot's sampling did, for its record: the LoRAs on the resident DiT (applied and taken off by the shot
// pass), a few-step schedule's timesteps and passes, two experts' steps and moves.
#include <algorithm>
#include <filesystem>
#include <stdexcept>

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
    figures.timesteps.assign(sampled.result.schedule.timesteps.begin(),
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

LoraFigures ShotPass::applyLoras(const Shot& shot, int index) {
  const std::vector<LoraRef>& refs = shot.loras ? *shot.loras : sequence_.settings.loras;
  models::VideoDiffusionModel& dit = residency_.dit();
  // One stack an expert: a LoRA without `expert` patches both (the low-noise one is the DiT itself).
  std::vector<models::LoraUse> low, high;
  LoraFigures figures;
  for (const LoraRef& ref : refs) {
    const std::filesystem::path file(ref.file);
    const std::filesystem::path path = file.is_absolute() ? file : options_.sequenceDirectory / file;
    auto& loaded = loraFiles_[path.string()];
    if (!loaded) {
      models::WeightShapes shapes;
      for (const auto& [name, tensor] : dit.namedParameters()) shapes.emplace_back(name, tensor.sizes().vec());
      loaded = std::make_shared<const models::LoraFile>(models::readLoraFile(path, shapes, dit.family()));
    }
    if (!experts_ || ref.expert != "high") low.push_back({loaded, ref.strength});
    if (experts_ && ref.expert != "low") high.push_back({loaded, ref.strength});
    figures.files.push_back(ref.file + (experts_ && !ref.expert.empty() ? " (" + ref.expert + " noise)" : ""));
    figures.strengths.push_back(ref.strength);
  }
  if (!high.empty() && experts_->mode() != ExpertResidency::Resident)
    throw std::runtime_error("shot " + std::to_string(index + 1) + " (" + shot.id + "): LoRAs on the high-noise expert need it "
                             "resident (memory.experts resident); " + toString(experts_->mode()) +
                             " takes it off the device between its steps. Give them \"expert\": \"low\" or keep both experts resident");
  const auto add = [&figures](const models::LoraPatchFigures& patched) {
    figures.weightsPatched += patched.weightsPatched;
    figures.bytesWritten += patched.bytesWritten;
    figures.bytesKept += patched.bytesKept;
    figures.seconds += patched.seconds;
  };
  add(loraPatcher_.apply(dit, low));
  if (experts_ && models_.ditHighNoise && (!high.empty() || highLoraPatcher_.patched()))
    add(highLoraPatcher_.apply(*models_.ditHighNoise, high));
  return figures;
}

void ShotPass::restoreLoras() {
  if (highLoraPatcher_.patched() && models_.ditHighNoise) highLoraPatcher_.restore(*models_.ditHighNoise);
  if (!loraPatcher_.patched()) return;
  if (models::VideoDiffusionModel* dit = residency_.loadedDit()) loraPatcher_.restore(*dit);
}

}  // namespace shotchain::render
