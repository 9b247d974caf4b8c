#include "memory/process_memory.h"

#include <fstream>
#include <string>

namespace shotchain::memory {

ProcessMemory processMemory() {
  ProcessMemory memory;
  std::ifstream status("/proc/self/status");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (status >> key) {
    if (key == "VmRSS:" && status >> kib)
      memory.resident = kib * 1024;
    else if (key == "VmHWM:" && status >> kib)
      memory.peak = kib * 1024;
    std::getline(status, unit);
  }
  return memory;
}

void resetProcessMemoryPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace shotchain::memory
