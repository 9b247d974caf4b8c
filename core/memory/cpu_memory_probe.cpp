#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#include <malloc.h>

#include "memory/counting_cpu_allocator.h"
#include "memory/memory_probe.h"

namespace shotchain::memory {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// MemTotal and MemAvailable from /proc/meminfo, in bytes.
void readMeminfo(std::uint64_t& total, std::uint64_t& available) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemTotal:")
      total = kib * 1024;
    else if (key == "MemAvailable:")
      available = kib * 1024;
  }
}

// glibc's malloc_info() XML lists free chunks by size class ("<size from= to= total= count=/>");
// the largest class with a free chunk bounds the largest free block from above. The top chunk
// (free space at the end of the main heap) is not listed there; mallinfo2().keepcost is its size.
std::uint64_t largestFreeChunk() {
  char* buffer = nullptr;
  std::size_t size = 0;
  FILE* stream = ::open_memstream(&buffer, &size);
  if (!stream) return 0;
  ::malloc_info(0, stream);
  std::fclose(stream);
  const std::string xml(buffer, size);
  std::free(buffer);
  std::uint64_t largest = 0;
  const std::string tag = "<size from=\"";
  for (std::size_t at = xml.find(tag); at != std::string::npos; at = xml.find(tag, at + 1)) {
    const std::size_t end = xml.find("/>", at);
    const std::string entry = xml.substr(at, end - at);
    auto attribute = [&](const char* name) -> std::uint64_t {
      const std::string key = std::string(name) + "=\"";
      const std::size_t p = entry.find(key);
      return p == std::string::npos ? 0 : std::strtoull(entry.c_str() + p + key.size(), nullptr, 10);
    };
    const std::uint64_t count = attribute("count"), total = attribute("total"), to = attribute("to");
    if (count == 1)
      largest = std::max(largest, total);
    else if (count > 1)
      largest = std::max(largest, to > 0 ? std::min(to, total) : total);
  }
  return largest;
}

class CpuMemoryProbe final : public MemoryProbe {
 public:
  CpuMemoryProbe() { installCountingCpuAllocator(); }

  MemorySample sample() override {
    MemorySample s;
    s.seconds = now();
    s.device = "cpu";
    readMeminfo(s.deviceTotal, s.deviceFree);
    const CpuAllocationStats stats = cpuAllocationStats();
    s.allocated = stats.allocated;
    s.peakAllocated = stats.peak;
    s.outOfMemoryEvents = stats.failures;
    const struct mallinfo2 info = ::mallinfo2();
    s.reserved = info.arena + info.hblkhd;
    s.active = info.uordblks + info.hblkhd;
    s.inactiveSplit = info.fordblks;
    s.freeFragmentation = freeFragmentation(info.fordblks);
    s.transferredBytes = transferredBytes();
    return s;
  }

  void resetPeak() override { resetCpuPeak(); }

 private:
  double freeFragmentation(std::uint64_t totalFree) {
    std::lock_guard<std::mutex> lock(snapshotMutex_);
    const double t = now();
    if (t - snapshotTime_ >= 1.0) {
      largestFree_ = std::max<std::uint64_t>(largestFreeChunk(), ::mallinfo2().keepcost);
      snapshotTime_ = t;
    }
    if (totalFree == 0) return 0.0;
    return 1.0 - std::min(1.0, static_cast<double>(largestFree_) / static_cast<double>(totalFree));
  }

  std::mutex snapshotMutex_;
  double snapshotTime_ = -1e9;
  std::uint64_t largestFree_ = 0;
};

}  // namespace

std::unique_ptr<MemoryProbe> makeCpuMemoryProbe() { return std::make_unique<CpuMemoryProbe>(); }

}  // namespace shotchain::memory
