#include "memory/counting_cpu_allocator.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
namespace shotchain::memory {
namespace {

constexpr std::size_t kAlignment = 64;  // what c10's own CPU allocator guarantees

std::atomic<std::uint64_t> gAllocated{0};
std::atomic<std::uint64_t> gPeak{0};
std::atomic<std::uint64_t> gAllocations{0};
std::atomic<std::uint64_t> gFailures{0};
std::atomic<bool> gInstalled{false};

std::atomic<bool> gHookSet{false};
std::mutex gHookMutex;
std::shared_ptr<const std::function<bool(std::size_t)>> gHook;

bool hookRefuses(std::size_t bytes) {
  if (!gHookSet.load(std::memory_order_acquire)) return false;
  std::shared_ptr<const std::function<bool(std::size_t)>> hook;
  {
    std::lock_guard<std::mutex> lock(gHookMutex);
    hook = gHook;
  }
  return hook && (*hook)(bytes);
}

// Sizes of live blocks by address. The DataPtr's context must be the data pointer itself,
// because libtorch's raw_allocate() asserts it (oneDNN scratch goes through that path).
std::mutex gSizesMutex;
std::unordered_map<void*, std::size_t> gSizes;

void raisePeak(std::uint64_t value) {
  std::uint64_t peak = gPeak.load(std::memory_order_relaxed);
  while (value > peak && !gPeak.compare_exchange_weak(peak, value, std::memory_order_relaxed)) {
  }
}

void release(void* data) {
  if (!data) return;
  std::size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(gSizesMutex);
    const auto it = gSizes.find(data);
    if (it != gSizes.end()) {
      bytes = it->second;
      gSizes.erase(it);
    }
  }
  gAllocated.fetch_sub(bytes, std::memory_order_relaxed);
  std::free(data);
}

class CountingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t bytes) override {
    void* data = nullptr;
    if (bytes > 0) {
      if (hookRefuses(bytes)) {
        gFailures.fetch_add(1, std::memory_order_relaxed);
        TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory: tried to allocate ", bytes,
                         " bytes (refused by the allocation-failure hook)");
      }
      if (::posix_memalign(&data, kAlignment, bytes) != 0 || !data) {
        gFailures.fetch_add(1, std::memory_order_relaxed);
        TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory: tried to allocate ", bytes, " bytes");
      }
    }
    if (data) {
      std::lock_guard<std::mutex> lock(gSizesMutex);
      gSizes[data] = bytes;
    }
    gAllocations.fetch_add(1, std::memory_order_relaxed);
    raisePeak(gAllocated.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};

CountingCpuAllocator gAllocator;

}  // namespace

void installCountingCpuAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Priority above the default registration so libtorch keeps ours.
    c10::SetCPUAllocator(&gAllocator, /*priority=*/1);
    gInstalled = c10::GetCPUAllocator() == &gAllocator;
  });
}

bool countingCpuAllocatorInstalled() { return gInstalled.load(); }

CpuAllocationStats cpuAllocationStats() {
  return {gAllocated.load(std::memory_order_relaxed), gPeak.load(std::memory_order_relaxed),
          gAllocations.load(std::memory_order_relaxed), gFailures.load(std::memory_order_relaxed)};
}

void setCpuAllocationFailureHook(std::function<bool(std::size_t bytes)> hook) {
  std::lock_guard<std::mutex> lock(gHookMutex);
  gHook = hook ? std::make_shared<const std::function<bool(std::size_t)>>(std::move(hook)) : nullptr;
  gHookSet.store(gHook != nullptr, std::memory_order_release);
}

void resetCpuPeak() { gPeak.store(gAllocated.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace shotchain::memory
