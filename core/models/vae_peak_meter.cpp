#include "models/vae_peak_meter.h"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

namespace shotchain::models {
namespace {

// libtorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define SHOTCHAIN_ALLOCATE_CONST
#define SHOTCHAIN_ALLOCATOR_COPY_DATA 1
#else
#define SHOTCHAIN_ALLOCATE_CONST const
#define SHOTCHAIN_ALLOCATOR_COPY_DATA 0
#endif

std::atomic<std::uint64_t> gCurrent{0};
std::atomic<std::uint64_t> gPeak{0};
std::atomic<bool> gInstalled{false};

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base), baseDeleter_(base->raw_deleter()) {
    if (baseDeleter_ == nullptr) throw std::runtime_error("VaePeakMeter: the CPU allocator has no raw deleter");
  }

  c10::DataPtr allocate(size_t n) SHOTCHAIN_ALLOCATE_CONST override {
    c10::DataPtr inner = base_->allocate(n);
    void* data = inner.get();
    if (data == nullptr || inner.get_context() != data) return inner;  // not a plain allocation: leave uncounted
    inner.release_context();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      sizes_[data] = n;
    }
    const std::uint64_t now = gCurrent.fetch_add(n) + n;
    std::uint64_t peak = gPeak.load();
    while (now > peak && !gPeak.compare_exchange_weak(peak, now)) {
    }
    return {data, data, &CountingAllocator::free, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &CountingAllocator::free; }

#if SHOTCHAIN_ALLOCATOR_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#endif

  static CountingAllocator* instance;

 private:
  static void free(void* data) {
    CountingAllocator* self = instance;
    std::size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      const auto it = self->sizes_.find(data);
      if (it != self->sizes_.end()) {
        n = it->second;
        self->sizes_.erase(it);
      }
    }
    gCurrent.fetch_sub(n);
    self->baseDeleter_(data);
  }

  c10::Allocator* base_;
  c10::DeleterFnPtr baseDeleter_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, std::size_t> sizes_;
};

CountingAllocator* CountingAllocator::instance = nullptr;

}  // namespace

void VaePeakMeter::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    CountingAllocator::instance = new CountingAllocator(c10::GetCPUAllocator());  // lives for the process
    c10::SetCPUAllocator(CountingAllocator::instance, /*priority=*/100);
    gInstalled = true;
  });
}

bool VaePeakMeter::installed() { return gInstalled.load(); }
std::uint64_t VaePeakMeter::current() { return gCurrent.load(); }
std::uint64_t VaePeakMeter::peak() { return gPeak.load(); }
void VaePeakMeter::resetPeak() { gPeak.store(gCurrent.load()); }

}  // namespace shotchain::models
