#pragma once

#include <cstdint>

#include "memory/counting_cpu_allocator.h"

namespace shotchain::testing {

// Refuses any CPU allocation that would take live tensor bytes above base + cap, like a device of
// that size; removed when it goes out of scope. Needs the counting CPU allocator (a CPU probe).
struct SimulatedDevice {
  explicit SimulatedDevice(std::uint64_t cap) {
    const std::uint64_t limit = memory::cpuAllocationStats().allocated + cap;
    memory::setCpuAllocationFailureHook(
        [limit](std::size_t bytes) { return memory::cpuAllocationStats().allocated + bytes > limit; });
  }
  SimulatedDevice(const SimulatedDevice&) = delete;
  SimulatedDevice& operator=(const SimulatedDevice&) = delete;
  ~SimulatedDevice() { memory::setCpuAllocationFailureHook({}); }
};

}  // namespace shotchain::testing
