#pragma once

#include <cstdint>

namespace shotchain::models {

// Peak of live libtorch CPU tensor bytes, for checking the VAE memory estimate on CPU.
// Method: a counting wrapper around libtorch's CPU allocator, installed (once, for the rest of the
// process) through c10::SetCPUAllocator; it counts every allocation that goes through libtorch's
// CPU allocator, including oneDNN's scratch buffers (which libtorch routes there). It does not see
// memory-mapped weights, plain malloc inside third-party code, or allocations made before install().
// The CUDA caching allocator has its own statistics; this is CPU only.
class VaePeakMeter {
 public:
  static void install();  // idempotent, thread-safe
  static bool installed();
  static std::uint64_t current();
  static std::uint64_t peak();
  static void resetPeak();  // peak := current
};

}  // namespace shotchain::models
