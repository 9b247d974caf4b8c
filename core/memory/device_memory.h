#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "memory/memory_probe.h"

// The host and CUDA devices alike (device_memory.cpp; a CUDA device through the CUDA plugin, memory/cuda_memory.h).
// Device names: "cpu", "cuda", "cuda:N".
namespace shotchain::memory {

// Total memory of the device: /proc/meminfo's MemTotal for "cpu", cudaMemGetInfo's total for CUDA.
// Throws std::runtime_error for a CUDA device where the CUDA plugin is not loaded or a device that does not exist.
std::uint64_t deviceTotalBytes(const std::string& device);

// The probe for `device`: makeCpuMemoryProbe() for "cpu", makeCudaMemoryProbe for CUDA.
std::unique_ptr<MemoryProbe> makeDeviceMemoryProbe(const std::string& device);
// The caching allocator's statistics and snapshot, cudaMemGetInfo, NVML (dlopen) at ~1 Hz.
// Throws std::runtime_error where the CUDA plugin is not loaded.
std::unique_ptr<MemoryProbe> makeCudaMemoryProbe(int deviceIndex);

// Returns cached, unused blocks to the system: CUDA's emptyCache, glibc's malloc_trim on the host.
void emptyDeviceCache(const std::string& device);

struct AllocatorTuningReport {
  bool applicable = false;  // a CUDA caching allocator is there to tune
  bool requested = false;
  bool applied = false;   // setAllocatorSettings accepted the setting
  bool verified = false;  // a snapshot shows expandable segments
  std::string setting;    // "expandable_segments:True"
  std::string message;    // one sentence for the report
};

// Call before the first weight is allocated. CUDA: setAllocatorSettings("expandable_segments:True")
// and a check from a snapshot; the host: "not applicable".
AllocatorTuningReport applyAllocatorTuning(bool enabled);

}  // namespace shotchain::memory
