#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "memory/model_slot.h"
#include "models/lora/lora_patcher.h"
#include "render/render_events.h"
#include "resolve/resolved_shot.h"

namespace shotchain::render {

// The LoRAs each shot puts on the DiT it samples (docs/lora.md): its resolved list handed to the DiT's slot —
// and to a pair's high-noise expert's, for the LoRAs that patch it — which leaves weights patched by the same
// LoRAs as they are and takes them off bit for bit before the model moves; each file is read once a render.
class ShotLoras {
 public:
  // `highNoise`: the high-noise expert of a pair, wherever it is (null: one DiT); its LoRAs go on when it is on the
  // device. `aliases`: the DiT family's other spellings of its layers.
  LoraFigures apply(const resolve::ResolvedShot& shot, memory::ModelSlot& dit, memory::ModelSlot* highNoise,
                    std::span<const models::LoraLayerAlias> aliases);
  // Both back to their base weights, and nothing asked of them (the end of a render).
  static void restore(memory::ModelSlot& dit, memory::ModelSlot* highNoise);

 private:
  std::map<std::pair<std::filesystem::path, std::string>, std::shared_ptr<const models::LoraFile>> files_;
};

}  // namespace shotchain::render
