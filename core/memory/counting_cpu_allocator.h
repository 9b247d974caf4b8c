#pragma once

#include <cstdint>

namespace shotchain {

struct CpuAllocationStats {
  std::uint64_t allocated = 0;  // bytes in live CPU tensors allocated since installation
  std::uint64_t peak = 0;       // highest `allocated` since the last reset
  std::uint64_t allocations = 0;
  std::uint64_t failures = 0;   // allocations the system refused (out of memory)
};

// Makes libtorch allocate every CPU tensor through a counting wrapper of the system's aligned
// allocator. Idempotent and thread-safe; tensors allocated before it keep their own deleter.
void installCountingCpuAllocator();
bool countingCpuAllocatorInstalled();
CpuAllocationStats cpuAllocationStats();
void resetCpuPeak();

}  // namespace shotchain
