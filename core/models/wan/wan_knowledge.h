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

// Wan 2.1 T2V (SkyReels-V2 DF and causal Wan checkpoints too, and the Wan 2.2 T2V-A14B experts of its shapes).
const FamilyKnowledge& wanT2vKnowledge();
const FamilyKnowledge& wanVaeKnowledge();

// The id of a Wan DiT's published tables ("" when nothing was published for it).
std::string wanVariantId(const WanConfig& config);

// Name rules read a file name lower-cased, with '-' as '_'.
bool wan21FileName(const std::string& normalised);
bool wan22FileName(const std::string& normalised);
// The Wan 2.1 / SkyReels / causal / Wan 2.2 T2V family a normalised file name suggests, in words ("" none).
std::string wanFamilyFromFileName(const std::string& normalised);

}  // namespace shotchain::models
