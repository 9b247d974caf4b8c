#include "memory/memory_probe.h"

namespace shotchain::memory {

void MemoryProbe::recordTransfer(std::uint64_t bytes) { transfers_.fetch_add(bytes, std::memory_order_relaxed); }
void MemoryProbe::markTransfers() { transfers_.store(0, std::memory_order_relaxed); }
std::uint64_t MemoryProbe::transferredBytes() const { return transfers_.load(std::memory_order_relaxed); }

}  // namespace shotchain::memory
