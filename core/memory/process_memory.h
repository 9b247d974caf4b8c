#pragma once

#include <cstdint>

namespace shotchain::memory {

// This process's resident memory, all of it (libraries, tensors, the allocator's cache, mapped files), from
// /proc/self/status: what `/usr/bin/time -v` and a system monitor show.
struct ProcessMemory {
  std::uint64_t resident = 0;  // VmRSS
  std::uint64_t peak = 0;      // VmHWM: the most since the start or the last resetProcessMemoryPeak()
};
ProcessMemory processMemory();
// Starts the peak over from what is resident now (Linux 4.0 on; elsewhere the peak goes on from the start).
void resetProcessMemoryPeak();

}  // namespace shotchain::memory
