#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

// Host↔device copies for the residency manager; the device-specific halves live in
// device_memory_cpu.cpp and device_memory_cuda.cpp.
namespace shotchain::memory {

at::Device torchDevice(const std::string& device);  // "cpu", "cuda", "cuda:N"

// One host buffer of `bytes` (uint8), allocated once and reused: page-locked (cudaHostAlloc) in a
// CUDA build when `device` is a CUDA device, ordinary host memory otherwise.
at::Tensor allocateHostStaging(std::uint64_t bytes, const std::string& device);

// Copies that run beside the compute: on a side CUDA stream, or on a worker thread on the host.
class TransferQueue {
 public:
  virtual ~TransferQueue() = default;
  // Starts dst[i].copy_(src[i]) for every pair, in order, without waiting.
  virtual void copyAsync(std::vector<std::pair<at::Tensor, at::Tensor>> dstSrc) = 0;
  // Blocks until every copy started so far is complete and visible to the compute stream.
  // Rethrows an error of a copy.
  virtual void wait() = 0;
};
std::unique_ptr<TransferQueue> makeTransferQueue(const std::string& device);
// The worker-thread queue (host copies in every build).
std::unique_ptr<TransferQueue> makeHostTransferQueue();
// /proc/meminfo's MemTotal.
std::uint64_t hostMemoryTotalBytes();

}  // namespace shotchain::memory
