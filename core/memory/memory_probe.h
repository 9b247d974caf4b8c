#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "memory/memory_sample.h"

namespace shotchain::memory {

// Reads device memory. sample() is cheap and may be called from any thread at ~10 Hz; the
// expensive part (an allocator snapshot for the free-block figure) is refreshed at most once a
// second and reused in between.
class MemoryProbe {
 public:
  virtual ~MemoryProbe() = default;
  virtual MemorySample sample() = 0;
  virtual void resetPeak() = 0;

  // The residency manager records every host↔device copy here; "pinned" must read 0 between shots.
  void recordTransfer(std::uint64_t bytes) { transfers_.fetch_add(bytes, std::memory_order_relaxed); }
  void markTransfers() { transfers_.store(0, std::memory_order_relaxed); }
  std::uint64_t transferredBytes() const { return transfers_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> transfers_{0};
};

// The host probe; creating it installs the counting CPU allocator. (The CUDA probe, reading the
// caching allocator's statistics, comes with the residency work.)
std::unique_ptr<MemoryProbe> makeCpuMemoryProbe();

}  // namespace shotchain::memory
