#pragma once

#include <filesystem>
#include <map>
#include <memory>

#include "models/lora/lora_patcher.h"
#include "render/render_events.h"
#include "resolve/resolved_shot.h"

namespace shotchain::models {
class VideoDiffusionModel;
}

namespace shotchain::render {

// The LoRAs the resident DiT carries for the shot it samples (docs/lora.md): each shot's resolved list put on
// the DiT — and on a pair's high-noise expert, for the LoRAs that patch it — leaving weights patched by the
// same LoRAs as they are, each file read once a render; taken off bit for bit before the DiT moves and when
// the render ends.
class ShotLoras {
 public:
  // `highNoise`: the high-noise expert of a pair, resident while a LoRA patches it (null: one DiT). `aliases`: the
  // DiT family's other spellings of its layers.
  LoraFigures apply(const resolve::ResolvedShot& shot, models::VideoDiffusionModel& dit, models::VideoDiffusionModel* highNoise,
                    std::span<const models::LoraLayerAlias> aliases);
  // Both back to their base weights (either may be null: not loaded now).
  void restore(models::VideoDiffusionModel* dit, models::VideoDiffusionModel* highNoise);
  bool patched() const { return low_.patched() || high_.patched(); }

 private:
  models::LoraPatcher low_;   // the DiT's (the low-noise expert of a pair)
  models::LoraPatcher high_;  // a pair's high-noise expert's
  std::map<std::filesystem::path, std::shared_ptr<const models::LoraFile>> files_;
};

}  // namespace shotchain::render
