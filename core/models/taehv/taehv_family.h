#pragma once

#include "models/model_registry.h"

namespace shotchain::models {

// TAEHV's row of the registry: a preview decoder (taew2_1, lighttaew2_1, taew2_2, lighttaew2_2) found in a models
// folder's vae_approx/ by its keys; recognised by `inspect` and `models`.
const ModelFamilyRow& taehvFamily();

}  // namespace shotchain::models
