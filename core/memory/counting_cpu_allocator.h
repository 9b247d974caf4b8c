#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace shotchain::memory {

struct CpuAllocationStats {
  std::uint64_t allocated = 0;  // bytes in live CPU tensors allocated since installation
  std::uint64_t peak = 0;       // highest `allocated` since the last reset
  std::uint64_t allocations = 0;
  std::uint64_t failures = 0;  // allocations the system refused (out of memory)
};

// Makes libtorch allocate every CPU tensor through a counting wrapper of the system's aligned
// allocator. Idempotent and thread-safe; tensors allocated before it keep their own deleter.
void installCountingCpuAllocator();
bool countingCpuAllocatorInstalled();
CpuAllocationStats cpuAllocationStats();
void resetCpuPeak();

// Simulated out-of-memory (tests, budget rehearsals): `hook` sees the size of every CPU tensor
// allocation; when it returns true the allocation fails as a real one would (c10::OutOfMemoryError,
// counted in `failures`). The hook must not allocate tensors. An empty function removes it.
void setCpuAllocationFailureHook(std::function<bool(std::size_t bytes)> hook);

}  // namespace shotchain::memory
