#include "memory/device_memory.h"

#include <stdexcept>

#include <malloc.h>

#include <ATen/ATen.h>

#include "memory/cuda_memory.h"
#include "memory/device_transfer.h"
#include "runtime/cuda_module.h"

namespace shotchain::memory {
namespace {

bool isCuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

const CudaMemory& cudaMemory(const std::string& device) {
  const auto entry = reinterpret_cast<CudaMemoryFn>(runtime::cudaModuleSymbol("shotchain_cuda_memory"));
  if (entry == nullptr)
    throw std::runtime_error("device \"" + device + "\": no CUDA here (" + runtime::cudaModuleStatus().note +
                             "); use \"cpu\"");
  return *entry();
}

int indexOf(const std::string& device) {
  const at::Device d(device);
  if (!d.is_cuda()) throw std::runtime_error("device \"" + device + "\" is not a device name (cpu, cuda, cuda:N)");
  const int index = d.has_index() ? d.index() : 0;
  const int count = cudaMemory(device).deviceCount();
  if (index >= count)
    throw std::runtime_error("device \"" + device + "\": no such CUDA device (" + std::to_string(count) + " present)");
  return index;
}

void requireKnown(const std::string& device) {
  if (device != "cpu" && !isCuda(device))
    throw std::runtime_error("device \"" + device + "\" is not a device name (cpu, cuda, cuda:N)");
}

}  // namespace

std::uint64_t deviceTotalBytes(const std::string& device) {
  requireKnown(device);
  if (!isCuda(device)) return hostMemoryTotalBytes();
  return cudaMemory(device).totalBytes(indexOf(device));
}

std::unique_ptr<MemoryProbe> makeCudaMemoryProbe(int deviceIndex) {
  return cudaMemory("cuda:" + std::to_string(deviceIndex)).probe(deviceIndex);
}

std::unique_ptr<MemoryProbe> makeDeviceMemoryProbe(const std::string& device) {
  requireKnown(device);
  if (!isCuda(device)) return makeCpuMemoryProbe();
  return makeCudaMemoryProbe(indexOf(device));
}

at::Device torchDevice(const std::string& device) {
  requireKnown(device);
  return isCuda(device) ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(indexOf(device))) : at::kCPU;
}

at::Tensor allocateHostStaging(std::uint64_t bytes, const std::string& device) {
  requireKnown(device);
  if (isCuda(device)) return cudaMemory(device).pageLockedBuffer(bytes);
  return at::empty({static_cast<std::int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte));
}

std::unique_ptr<TransferQueue> makeTransferQueue(const std::string& device) {
  requireKnown(device);
  if (!isCuda(device)) return makeHostTransferQueue();
  return cudaMemory(device).sideStreamQueue(indexOf(device));
}

void emptyDeviceCache(const std::string& device) {
  if (isCuda(device)) {
    cudaMemory(device).emptyCache();
    return;
  }
  ::malloc_trim(0);
}

AllocatorTuningReport applyAllocatorTuning(bool enabled) {
  if (const auto entry = reinterpret_cast<CudaMemoryFn>(runtime::cudaModuleSymbol("shotchain_cuda_memory")))
    return entry()->tuneAllocator(enabled);
  AllocatorTuningReport report;
  report.requested = enabled;
  report.setting = "expandable_segments:True";
  report.message =
      "allocator tuning (expandable_segments) is not applicable on the host: there is no CUDA caching allocator";
  return report;
}

}  // namespace shotchain::memory
