#pragma once

#include <cstdint>
#include <memory>

#include <ATen/core/Tensor.h>

#include "memory/device_memory.h"
#include "memory/device_transfer.h"
#include "memory/memory_probe.h"

namespace shotchain::memory {

// What the CUDA plugin (runtime/cuda_module.h) does for device_memory.cpp on a CUDA device; its
// implementation is device_memory_cuda.cpp. Device indices are checked before they reach it.
class CudaMemory {
 public:
  virtual ~CudaMemory() = default;
  virtual int deviceCount() const = 0;
  virtual std::uint64_t totalBytes(int index) const = 0;  // cudaMemGetInfo's total
  // The caching allocator's statistics and snapshot, cudaMemGetInfo, NVML (dlopen) at ~1 Hz.
  virtual std::unique_ptr<MemoryProbe> probe(int index) const = 0;
  // cudaHostAlloc directly: the caching host allocator would round a multi-GB buffer up to a power of two.
  virtual at::Tensor pageLockedBuffer(std::uint64_t bytes) const = 0;
  virtual std::unique_ptr<TransferQueue> sideStreamQueue(int index) const = 0;
  virtual void emptyCache() const = 0;
  virtual AllocatorTuningReport tuneAllocator(bool enabled) const = 0;
};
using CudaMemoryFn = const CudaMemory* (*)();

}  // namespace shotchain::memory
