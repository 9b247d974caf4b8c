// The CUDA plugin (core/cuda_sources.txt): the caching allocator's statistics and snapshot,
// cudaMemGetInfo, NVML through dlopen, page-locked staging, side-stream copies, allocator tuning.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>

#include <dlfcn.h>

#include <cuda_runtime_api.h>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "memory/cuda_allocator_compat.h"
#include "memory/cuda_memory.h"

namespace shotchain::memory {
namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
constexpr std::size_t kAggregate = 0;  // StatType::AGGREGATE

double steadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// NVML, opened at run time (never a link dependency): device-wide used memory, all processes.
class Nvml {
 public:
  Nvml() {
    lib_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return;
    auto init = reinterpret_cast<int (*)()>(::dlsym(lib_, "nvmlInit_v2"));
    handleByIndex_ = reinterpret_cast<int (*)(unsigned, void**)>(::dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
    memoryInfo_ = reinterpret_cast<int (*)(void*, Memory*)>(::dlsym(lib_, "nvmlDeviceGetMemoryInfo"));
    ok_ = init && handleByIndex_ && memoryInfo_ && init() == 0;
  }
  ~Nvml() {
    if (lib_) ::dlclose(lib_);
  }
  // Bytes used on the device by every process, 0 when NVML is not there.
  std::uint64_t used(unsigned index) {
    if (!ok_) return 0;
    void* handle = nullptr;
    Memory memory{};
    if (handleByIndex_(index, &handle) != 0 || memoryInfo_(handle, &memory) != 0) return 0;
    return memory.used;
  }

 private:
  struct Memory {
    unsigned long long total, free, used;
  };
  void* lib_ = nullptr;
  bool ok_ = false;
  int (*handleByIndex_)(unsigned, void**) = nullptr;
  int (*memoryInfo_)(void*, Memory*) = nullptr;
};

class CudaMemoryProbe final : public MemoryProbe {
 public:
  explicit CudaMemoryProbe(c10::DeviceIndex index) : index_(index) {}

  MemorySample sample() override {
    MemorySample s;
    s.seconds = steadyNow();
    s.device = "cuda:" + std::to_string(index_);
    {
      c10::cuda::CUDAGuard guard(index_);
      std::size_t free = 0, total = 0;
      if (cudaMemGetInfo(&free, &total) == cudaSuccess) {
        s.deviceFree = free;
        s.deviceTotal = total;
      }
    }
    const auto stats = alloc::getDeviceStats(index_);
    s.allocated = static_cast<std::uint64_t>(stats.allocated_bytes[kAggregate].current);
    s.peakAllocated = static_cast<std::uint64_t>(stats.allocated_bytes[kAggregate].peak);
    s.reserved = static_cast<std::uint64_t>(stats.reserved_bytes[kAggregate].current);
    s.active = static_cast<std::uint64_t>(stats.active_bytes[kAggregate].current);
    s.inactiveSplit = static_cast<std::uint64_t>(stats.inactive_split_bytes[kAggregate].current);
    s.allocRetries = static_cast<std::uint64_t>(stats.num_alloc_retries);
    s.outOfMemoryEvents = static_cast<std::uint64_t>(stats.num_ooms);
    s.freeFragmentation = freeFragmentation(s.deviceTotal);
    s.transferredBytes = transferredBytes();
    return s;
  }

  void resetPeak() override { alloc::resetPeakStats(index_); }

  // Device-wide used bytes from NVML (all processes), read at most once a second.
  std::uint64_t nvmlUsed() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (steadyNow() - nvmlTime_ >= 1.0) {
      nvmlUsed_ = nvml_.used(static_cast<unsigned>(index_));
      nvmlTime_ = steadyNow();
    }
    return nvmlUsed_;
  }

 private:
  // 1 − largest free block / total free over this device's cached segments, from a snapshot taken
  // at most once a second (native allocator only; the async backend has no segments to show).
  double freeFragmentation(std::uint64_t) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (steadyNow() - snapshotTime_ >= 1.0) {
      std::uint64_t largest = 0, total = 0;
      for (const auto& segment : cuda_compat::snapshotSegments()) {
        if (segment.device != index_) continue;
        for (const auto& block : segment.blocks) {
          if (block.allocated || block.active) continue;
          const auto size = static_cast<std::uint64_t>(block.size);
          total += size;
          largest = std::max(largest, size);
        }
      }
      fragmentation_ = total == 0 ? 0.0 : 1.0 - static_cast<double>(largest) / static_cast<double>(total);
      snapshotTime_ = steadyNow();
    }
    return fragmentation_;
  }

  c10::DeviceIndex index_;
  std::mutex mutex_;
  double snapshotTime_ = -1e9, nvmlTime_ = -1e9;
  double fragmentation_ = 0;
  std::uint64_t nvmlUsed_ = 0;
  Nvml nvml_;
};

// Copies on a side stream from the pool; wait() makes the compute stream wait for them.
class StreamTransferQueue final : public TransferQueue {
 public:
  explicit StreamTransferQueue(c10::DeviceIndex index)
      : index_(index), stream_(c10::cuda::getStreamFromPool(false, index)) {}
  void copyAsync(std::vector<std::pair<at::Tensor, at::Tensor>> dstSrc) override {
    // The destinations were allocated on the compute stream: the side stream waits for that first.
    at::cuda::CUDAEvent ready;
    ready.record(c10::cuda::getCurrentCUDAStream(index_));
    ready.block(stream_);
    {
      c10::cuda::CUDAStreamGuard guard(stream_);
      for (auto& [dst, src] : dstSrc) dst.copy_(src, /*non_blocking=*/true);
    }
    done_.record(stream_);
    pending_ = true;
  }
  void wait() override {
    if (!pending_) return;
    done_.block(c10::cuda::getCurrentCUDAStream(index_));
    done_.synchronize();  // the host staging may be written again after this
    pending_ = false;
  }

 private:
  c10::DeviceIndex index_;
  c10::cuda::CUDAStream stream_;
  at::cuda::CUDAEvent done_;
  bool pending_ = false;
};

class PluginCudaMemory final : public CudaMemory {
 public:
  int deviceCount() const override { return static_cast<int>(c10::cuda::device_count()); }

  std::uint64_t totalBytes(int index) const override {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess)
      throw std::runtime_error("cudaMemGetInfo failed on cuda:" + std::to_string(index));
    return total;
  }

  std::unique_ptr<MemoryProbe> probe(int index) const override {
    return std::make_unique<CudaMemoryProbe>(static_cast<c10::DeviceIndex>(index));
  }

  at::Tensor pageLockedBuffer(std::uint64_t bytes) const override {
    void* data = nullptr;
    if (cudaHostAlloc(&data, std::max<std::size_t>(bytes, 1), cudaHostAllocDefault) != cudaSuccess)
      throw std::runtime_error("cudaHostAlloc: cannot page-lock " + std::to_string(bytes) +
                               " bytes of host memory for the offload");
    return at::from_blob(
        data, {static_cast<std::int64_t>(bytes)}, [](void* p) { cudaFreeHost(p); },
        at::TensorOptions().dtype(at::kByte));
  }

  std::unique_ptr<TransferQueue> sideStreamQueue(int index) const override {
    return std::make_unique<StreamTransferQueue>(static_cast<c10::DeviceIndex>(index));
  }

  void emptyCache() const override {
    c10::cuda::device_synchronize();
    alloc::emptyCache();
  }

  AllocatorTuningReport tuneAllocator(bool enabled) const override;
};

AllocatorTuningReport PluginCudaMemory::tuneAllocator(bool enabled) const {
  AllocatorTuningReport report;
  report.applicable = c10::cuda::device_count() > 0;
  report.requested = enabled;
  report.setting = "expandable_segments:True";
  if (!report.applicable) {
    report.message = "allocator tuning not applicable: no CUDA device";
    return report;
  }
  if (!enabled) {
    report.message = "allocator tuning off (expandable_segments not set)";
    return report;
  }
  try {
    alloc::setAllocatorSettings(report.setting);
    report.applied = true;
  } catch (const std::exception& error) {
    report.message = std::string("setAllocatorSettings refused expandable_segments: ") + error.what();
    return report;
  }
  // Verify: a fresh allocation must land in an expandable segment.
  {
    const at::Tensor probe = at::empty({64 << 20}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA));
    for (const auto& segment : cuda_compat::snapshotSegments())
      if (cuda_compat::isExpandable(segment)) report.verified = true;
  }
  report.message = report.verified
                       ? "expandable_segments:True applied and verified (the snapshot shows expandable segments)"
                       : "expandable_segments:True applied but no expandable segment in the snapshot "
                         "(async backend, or memory was reserved before the setting)";
  return report;
}

}  // namespace
}  // namespace shotchain::memory

extern "C" __attribute__((visibility("default"))) const shotchain::memory::CudaMemory* shotchain_cuda_memory() {
  static const shotchain::memory::PluginCudaMemory memory;
  return &memory;
}
