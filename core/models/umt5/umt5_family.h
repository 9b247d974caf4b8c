#pragma once

#include "models/model_registry.h"

namespace shotchain::models {

// The UMT5 text encoder's row of the registry (Wan's umt5-xxl, official or ComfyUI/HF key names).
const ModelFamilyRow& umt5Family();

}  // namespace shotchain::models
