#pragma once

// The memory plan's request for a resolved sequence: the models' memory models from their headers (no weights
// read) and each enabled shot's latent, branches, step cache, LoRAs and experts as resolved.
#include <cstdint>
#include <optional>
#include <string>

#include "memory/memory_planner.h"
#include "resolve/resolved_shot.h"

namespace shotchain::resolve {

struct PlanTarget {
  std::string device = "cpu";                // "cpu" or "cuda[:N]"
  std::optional<std::uint64_t> deviceTotal;  // a device planned for that is not here (else deviceTotalBytes)
  std::optional<std::uint64_t> budget;       // else the document's
  std::optional<ResidencyPolicy> policy;     // else the document's
};

// Throws std::runtime_error naming the file when a model file cannot be read.
memory::PlanRequest planRequest(const ResolvedSequence& resolved, const SequenceSettings& settings,
                                const PlanTarget& target);

}  // namespace shotchain::resolve
