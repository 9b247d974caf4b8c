#pragma once

#include <cstdint>
#include <vector>

#include "memory/memory_planner.h"

namespace shotchain::memory {

// The plan of a two-expert set (docs/wan22.md §8): `planOne` run with both experts on the device and with one
// at a time; auto keeps both when that fits, else one at a time (swapped at the boundary through host
// memory), and refuses when neither fits, naming the smallest budget that would. Fills the expert fields.
MemoryPlan planExperts(const PlanRequest& request, MemoryPlan (*planOne)(const PlanRequest&));

// The bytes one shot moves for its experts under `residency`, its steps running `runs` (1 high, 0 low) from
// the low-noise expert on the device, and ending with it there again: swap moves both experts at every
// change (high + low bytes), reload reads the expert it changes to.
std::uint64_t expertBytesForShot(ExpertResidency residency, const std::vector<int>& runs, std::uint64_t highBytes,
                                 std::uint64_t lowBytes);

}  // namespace shotchain::memory
