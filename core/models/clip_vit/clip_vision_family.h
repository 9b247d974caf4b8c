#pragma once

#include "models/model_registry.h"

namespace shotchain::models {

// The CLIP vision tower's row of the registry: a model set's image encoder (model.image_encoder, a models folder's
// clip_vision/), loaded as models::ImageEncoder; recognised by `inspect` and `models`.
const ModelFamilyRow& clipVisionFamily();

}  // namespace shotchain::models
