#include <fstream>
#include <future>
#include <stdexcept>

#include <ATen/ATen.h>

#include "memory/device_transfer.h"

namespace shotchain::memory {
namespace {

// The host side: copies on a worker thread (one std::async job per batch), so that a prefetch
// overlaps whatever the render thread does meanwhile.
class ThreadTransferQueue final : public TransferQueue {
 public:
  ~ThreadTransferQueue() override {
    for (auto& job : jobs_)
      if (job.valid()) job.wait();
  }
  void copyAsync(std::vector<std::pair<at::Tensor, at::Tensor>> dstSrc) override {
    jobs_.push_back(std::async(std::launch::async, [pairs = std::move(dstSrc)] {
      for (const auto& [dst, src] : pairs) {
        at::Tensor target = dst;
        target.copy_(src);
      }
    }));
  }
  void wait() override {
    std::vector<std::future<void>> jobs = std::move(jobs_);
    jobs_.clear();
    for (auto& job : jobs) job.get();
  }

 private:
  std::vector<std::future<void>> jobs_;
};

}  // namespace

std::uint64_t hostMemoryTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemTotal:") return kib * 1024;
  }
  throw std::runtime_error("/proc/meminfo: no MemTotal line");
}

std::unique_ptr<TransferQueue> makeHostTransferQueue() { return std::make_unique<ThreadTransferQueue>(); }

}  // namespace shotchain::memory
