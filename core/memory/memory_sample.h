#pragma once

#include <cstdint>
#include <string>

namespace shotchain::memory {

// One reading of device memory, as the VRAM panel, the report and the benchmarks show it.
// On CPU "device" is the host: tensors are counted by ShotChain's CPU allocator and the
// caching figures come from glibc malloc.
struct MemorySample {
  double seconds = 0;  // steady-clock time of the reading
  std::string device;  // "cpu", "cuda:0"

  std::uint64_t deviceTotal = 0;
  std::uint64_t deviceFree = 0;

  std::uint64_t allocated = 0;      // bytes in live tensors
  std::uint64_t reserved = 0;       // bytes the allocator holds from the system
  std::uint64_t active = 0;         // bytes in blocks in use (tensors and anything else the allocator serves)
  std::uint64_t peakAllocated = 0;  // since the last resetPeak()

  // Fragmentation, three figures:
  std::uint64_t cachedUnused() const { return reserved > allocated ? reserved - allocated : 0; }
  std::uint64_t inactiveSplit = 0;  // free bytes trapped inside segments that hold live blocks
  double freeFragmentation = 0;     // 1 − largest free block / total free (0 when nothing is free)

  std::uint64_t allocRetries = 0;
  std::uint64_t outOfMemoryEvents = 0;
  std::uint64_t transferredBytes = 0;  // host↔device since markTransfers()
};

}  // namespace shotchain::memory
