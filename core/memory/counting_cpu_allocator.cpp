#include "memory/counting_cpu_allocator.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

namespace shotchain {
namespace {

constexpr std::size_t kAlignment = 64;  // what c10's own CPU allocator guarantees

std::atomic<std::uint64_t> gAllocated{0};
std::atomic<std::uint64_t> gPeak{0};
std::atomic<std::uint64_t> gAllocations{0};
std::atomic<std::uint64_t> gFailures{0};
std::atomic<bool> gInstalled{false};

struct Block {
  void* data;
  std::size_t bytes;
};

void raisePeak(std::uint64_t value) {
  std::uint64_t peak = gPeak.load(std::memory_order_relaxed);
  while (value > peak && !gPeak.compare_exchange_weak(peak, value, std::memory_order_relaxed)) {
  }
}

void release(void* context) {
  auto* block = static_cast<Block*>(context);
  gAllocated.fetch_sub(block->bytes, std::memory_order_relaxed);
  std::free(block->data);
  delete block;
}

class CountingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t bytes) const override {
    void* data = nullptr;
    if (bytes > 0) {
      if (::posix_memalign(&data, kAlignment, bytes) != 0 || !data) {
        gFailures.fetch_add(1, std::memory_order_relaxed);
        TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory: tried to allocate ", bytes, " bytes");
      }
    }
    gAllocations.fetch_add(1, std::memory_order_relaxed);
    raisePeak(gAllocated.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    return {data, new Block{data, bytes}, &release, c10::Device(c10::DeviceType::CPU)};
  }

#if TORCH_VERSION_MAJOR >= 2
  void copy_data(void* dest, const void* src, std::size_t count) const final { std::memcpy(dest, src, count); }
#endif
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

void resetCpuPeak() { gPeak.store(gAllocated.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace shotchain
