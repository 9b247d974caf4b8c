#pragma once

#include "models/model_registry.h"

namespace shotchain::models {

// The Wan family's rows of the registry: the DiT (Wan 2.1 T2V, SkyReels-V2 DF, causal Wan) and its VAE.
const ModelFamilyRow& wanDitFamily();
const ModelFamilyRow& wanVaeFamily();
// What `inspect` says of a Wan VAE of either generation (both families' rows use it).
FamilyInspection inspectWanVaeFile(const io::WeightSet& weights);

}  // namespace shotchain::models
