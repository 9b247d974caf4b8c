#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "models/family_knowledge.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// What the Models panel says of a LoRA file, from its header alone (no torch: the studio includes it).
struct LoraSummary {
  int layers = 0;         // layers it patches (a pair or a diff each)
  std::int64_t rank = 0;  // the most common rank of its pairs (0: diffs only)
  std::string target;     // the family it is for, by its layer names (FamilyKnowledge::loraTarget), else ""
  const FamilyKnowledge* family = nullptr;  // that family's knowledge (its named LoRAs), else null
  std::uint64_t patchedElements = 0;
};

// nullopt when the file has no LoRA keys (not a LoRA); its target among `families`. Implemented in lora_file.cpp.
std::optional<LoraSummary> summariseLora(const io::WeightSet& weights,
                                         std::span<const FamilyKnowledge* const> families);

}  // namespace shotchain::models
