#pragma once

#include "models/model_registry.h"

namespace shotchain::models {

// The CLIP vision tower's row of the registry: recognised in a models folder and by `inspect`; no role of a model
// set yet (the renderer does not run an image encoder).
const ModelFamilyRow& clipVisionFamily();

}  // namespace shotchain::models
