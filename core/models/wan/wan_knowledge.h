#pragma once

// What the product knows of the Wan families beyond their classes (models/family_knowledge.h): the
// reference's negative prompt, sizes, LoRA layer names, published step-cache tables, ComfyUI's words,
// the preview factors of the Wan 2.1 VAE. Wan 2.2's rows (models/wan22/) share the DiT's.
#include <span>
#include <string>

#include "models/family_knowledge.h"
#include "models/wan/wan_config.h"

namespace shotchain::models {

// Variant ids of the Wan DiTs with published step-cache tables.
inline constexpr const char* kWan21T2v1_3B = "wan2.1-t2v-1.3b";
inline constexpr const char* kWan21T2v14B = "wan2.1-t2v-14b";

const char* wanNegativePrompt();
std::span<const LoraLayerAlias> wanLoraLayerAliases();
// The LoRAs of the Wan families' community told by their file names (SVI's).
std::span<const NamedLora> wanNamedLoras();

// Wan 2.1 T2V (SkyReels-V2 DF and causal Wan checkpoints too, and the Wan 2.2 T2V-A14B experts of its shapes).
const FamilyKnowledge& wanT2vKnowledge();
const FamilyKnowledge& wanVaeKnowledge();

// Wan 2.1 I2V-14B and FLF2V-14B, by the name wan21I2vName gives ("Wan 2.1 I2V 480p", "Wan 2.1 I2V 720p",
// "Wan 2.1 FLF2V"; any other name: an I2V of unknown resolution): the reference's sampler defaults differ.
const FamilyKnowledge& wan21I2vKnowledge(const std::string& name);
// The 480p and 720p I2V checkpoints have the same shapes: only a file name that says which tells them apart.
std::string wan21I2vName(const std::string& normalised, const WanConfig& config);

// The id of a Wan DiT's published tables ("" when nothing was published for it).
std::string wanVariantId(const WanConfig& config);

// Name rules read a file name lower-cased, with '-' as '_'.
bool wan21FileName(const std::string& normalised);
bool wan22FileName(const std::string& normalised);
// The Wan 2.1 / SkyReels / causal / Wan 2.2 T2V family a normalised file name suggests, in words ("" none).
std::string wanFamilyFromFileName(const std::string& normalised);

}  // namespace shotchain::models
