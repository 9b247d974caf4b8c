#include "memory/memory_plan.h"

namespace shotchain::memory {

std::uint64_t MemoryPlan::chosenPeak() const {
  switch (chosen) {
    case ResidencyPolicy::Offload:
      return peakOffload;
    case ResidencyPolicy::Reload:
      return peakReload;
    case ResidencyPolicy::Pinned:
    case ResidencyPolicy::Auto:
      break;
  }
  return tiledDecode ? peakPinnedTiled : peakPinned;
}

}  // namespace shotchain::memory
