#include <stdexcept>

#include <malloc.h>

#include <ATen/ATen.h>

#include "memory/device_memory.h"
#include "memory/device_transfer.h"

namespace shotchain::memory {
namespace {

void requireCpu(const std::string& device) {
  if (device != "cpu")
    throw std::runtime_error("device \"" + device + "\": this build has no CUDA (libtorch without CUDA); use \"cpu\"");
}

}  // namespace

std::uint64_t deviceTotalBytes(const std::string& device) {
  requireCpu(device);
  return hostMemoryTotalBytes();
}

std::unique_ptr<MemoryProbe> makeDeviceMemoryProbe(const std::string& device) {
  requireCpu(device);
  return makeCpuMemoryProbe();
}

std::unique_ptr<MemoryProbe> makeCudaMemoryProbe(int) {
  throw std::runtime_error("the CUDA memory probe needs a CUDA build of libtorch");
}

at::Device torchDevice(const std::string& device) {
  requireCpu(device);
  return at::kCPU;
}

at::Tensor allocateHostStaging(std::uint64_t bytes, const std::string& device) {
  requireCpu(device);
  return at::empty({static_cast<std::int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte));
}

std::unique_ptr<TransferQueue> makeTransferQueue(const std::string& device) {
  requireCpu(device);
  return makeHostTransferQueue();
}

void emptyDeviceCache(const std::string&) { ::malloc_trim(0); }

AllocatorTuningReport applyAllocatorTuning(bool enabled) {
  AllocatorTuningReport report;
  report.requested = enabled;
  report.setting = "expandable_segments:True";
  report.message =
      "allocator tuning (expandable_segments) is not applicable on the host: there is no CUDA caching allocator";
  return report;
}

}  // namespace shotchain::memory
