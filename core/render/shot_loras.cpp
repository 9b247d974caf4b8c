#include "render/shot_loras.h"

#include <stdexcept>

#include "io/content_digest.h"
#include "models/video_diffusion_model.h"

namespace shotchain::render {

LoraFigures ShotLoras::apply(const resolve::ResolvedShot& shot, memory::ModelSlot& ditSlot,
                             memory::ModelSlot* highNoise, std::span<const models::LoraLayerAlias> aliases) {
  const models::VideoDiffusionModel& dit = ditSlot.onDevice();
  const bool twoExperts = shot.experts.has_value();
  std::vector<models::LoraUse> low, high;
  LoraFigures figures;
  for (const resolve::ResolvedLora& lora : shot.loras) {
    auto& file = files_[{lora.path, io::contentDigest(lora.path)}];  // a file rewritten since is read again
    if (!file) {
      models::WeightShapes shapes;
      for (const auto& [name, tensor] : dit.namedParameters()) shapes.emplace_back(name, tensor.sizes().vec());
      file = std::make_shared<const models::LoraFile>(models::readLoraFile(lora.path, shapes, dit.family(), aliases));
    }
    if (!twoExperts || lora.expert != resolve::LoraExpert::High) low.push_back({file, lora.strength});
    if (twoExperts && lora.expert != resolve::LoraExpert::Low) high.push_back({file, lora.strength});
    const char* expert = lora.expert == resolve::LoraExpert::High  ? " (high noise)"
                         : lora.expert == resolve::LoraExpert::Low ? " (low noise)"
                                                                   : "";
    figures.files.push_back(lora.file + (twoExperts ? expert : ""));
    figures.strengths.push_back(lora.strength);
  }
  if (!high.empty() && !highNoise)
    throw std::logic_error("shot " + std::to_string(shot.index + 1) +
                           ": LoRAs on a high-noise expert that is not there");
  const auto add = [&figures](const models::LoraPatchFigures& patched) {
    figures.weightsPatched += patched.weightsPatched;
    figures.bytesWritten += patched.bytesWritten;
    figures.bytesKept += patched.bytesKept;
    figures.seconds += patched.seconds;
  };
  add(ditSlot.patch(low));
  if (highNoise) add(highNoise->patch(high));  // parked or released: put on when it is swapped in
  return figures;
}

void ShotLoras::restore(memory::ModelSlot& dit, memory::ModelSlot* highNoise) {
  if (highNoise) highNoise->unpatch();
  dit.unpatch();
}

}  // namespace shotchain::render
