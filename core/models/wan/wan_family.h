#pragma once

#include "models/model_registry.h"
#include "models/wan/wan_config.h"
#include "models/wan/wan_vae_config.h"

namespace shotchain::models {

// The Wan family's rows of the registry: the DiT (Wan 2.1 T2V, SkyReels-V2 DF, causal Wan) and its VAE.
const ModelFamilyRow& wanDitFamily();
const ModelFamilyRow& wanVaeFamily();
// Wan 2.1 I2V-14B (480p / 720p) and FLF2V-14B: the Wan DiT with a CLIP image embedding.
const ModelFamilyRow& wan21I2vFamily();
// What `inspect` says of a Wan VAE of either generation (both families' rows use it).
FamilyInspection inspectWanVaeFile(const io::WeightSet& weights);
// What the resolver needs of a Wan DiT of `config` (with the knowledge of its row) and of a Wan VAE of either generation.
DitFacts wanDitFacts(const WanConfig& config, const FamilyKnowledge& knowledge);
VaeFacts wanVaeFacts(const WanVaeConfig& config);
// The tensors city96's Wan GGUF conversion keeps unquantised: the embeddings, modulations and the head.
bool wanGgufKeepsUnquantised(const std::string& name);

}  // namespace shotchain::models
