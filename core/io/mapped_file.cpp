#include "io/mapped_file.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/safetensors_header.h"
#include "util/bounded_file.h"

namespace shotchain::io {
namespace {

// The mappings the SIGBUS handler may repair, read there without a lock (atomics only).
struct Slot {
  std::atomic<std::uintptr_t> begin{0};  // 0: free
  std::atomic<std::uintptr_t> end{0};
  std::atomic<std::uintptr_t> zeroFrom{0};  // 0: intact
  const MappedFile* owner = nullptr;        // under registryMutex
};
constexpr std::size_t kSlots = 1024;
std::array<Slot, kSlots> slots;
std::mutex registryMutex;
std::uintptr_t pageSize = 4096;
struct sigaction previousAction {};

// A read past the end of a file cut short while mapped: the pages from the faulting one to the mapping's end
// become zeros, the slot remembers where, and the read goes on. Any other SIGBUS is left to what was there
// before (the action is put back and the read faults again).
void onBusError(int, siginfo_t* info, void*) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Slot& slot : slots) {
    const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    const std::uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= end) continue;
    const std::uintptr_t page = address & ~(pageSize - 1);
    void* zeros = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ | PROT_WRITE,
                         MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (zeros == MAP_FAILED) break;
    std::uintptr_t seen = slot.zeroFrom.load();
    while ((seen == 0 || page < seen) && !slot.zeroFrom.compare_exchange_weak(seen, page)) {
    }
    return;
  }
  ::sigaction(SIGBUS, &previousAction, nullptr);
}

void installHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    pageSize = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = onBusError;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previousAction);
  });
}

std::vector<std::string> cutShortHistory;  // under registryMutex

std::string cutShortMessage(const MappedFile& file) {
  std::error_code error;
  const std::uintmax_t now = std::filesystem::file_size(file.path(), error);
  const std::string was = std::to_string(file.size());
  return file.path().string() + ": was cut short while in use (" +
         (error ? "it is gone now; it had " + was + " bytes"
                : "to " + std::to_string(now) + " of its " + was + " bytes") +
         "); nothing computed from what was read past the cut is kept. Put the whole file back and try again";
}

std::filesystem::path comparable(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return (error ? path : absolute).lexically_normal();
}

}  // namespace

MappedFile::MappedFile(std::byte* data, std::size_t size, std::filesystem::path path)
    : data_(data), size_(size), path_(comparable(path)) {
  if (data_ == nullptr) return;
  installHandler();
  const std::lock_guard<std::mutex> lock(registryMutex);
  for (std::size_t i = 0; i < kSlots; ++i) {
    Slot& slot = slots[i];
    if (slot.begin.load() != 0) continue;
    slot.owner = this;
    slot.zeroFrom.store(0);
    slot.end.store(reinterpret_cast<std::uintptr_t>(data_) + ((size_ + pageSize - 1) & ~(pageSize - 1)));
    slot.begin.store(reinterpret_cast<std::uintptr_t>(data_), std::memory_order_release);
    slot_ = static_cast<int>(i);
    return;
  }
}

std::optional<std::uint64_t> MappedFile::cutShortAt() const {
  if (slot_ < 0) return std::nullopt;
  const std::uintptr_t from = slots[static_cast<std::size_t>(slot_)].zeroFrom.load();
  if (from == 0) return std::nullopt;
  return static_cast<std::uint64_t>(from - reinterpret_cast<std::uintptr_t>(data_));
}

std::size_t cutShortMark() {
  const std::lock_guard<std::mutex> lock(registryMutex);
  return cutShortHistory.size();
}

std::string cutShortProblem(std::size_t mark) {
  const std::lock_guard<std::mutex> lock(registryMutex);
  for (const Slot& slot : slots)
    if (slot.begin.load() != 0 && slot.owner != nullptr && slot.owner->cutShortAt())
      return cutShortMessage(*slot.owner);
  return mark < cutShortHistory.size() ? cutShortHistory[mark] : std::string();
}

std::shared_ptr<const MappedFile> MappedFile::map(const std::filesystem::path& path) {
  const std::string label = path.filename().string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw SafetensorsError(label + ": cannot open: " + std::strerror(errno) + " (" + path.string() + ")");
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw SafetensorsError(label + ": cannot read its size: " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw SafetensorsError(label + ": " + util::notRegularFileReason(info.st_mode) + " (" + path.string() + ")");
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  void* address = nullptr;
  if (size > 0) {
    address = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (address == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw SafetensorsError(label + ": cannot map into memory: " + std::strerror(error));
    }
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<std::byte*>(address), size, path));
}

void MappedFile::releasePages(std::uint64_t offset, std::uint64_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  length = std::min<std::uint64_t>(length, size_ - offset);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(data_);
  const std::uintptr_t begin = (base + offset + page - 1) & ~(page - 1);
  const std::uintptr_t end = (base + offset + length) & ~(page - 1);
  if (end <= begin) return;
  // /proc/self/pagemap, one 64-bit entry a page: bit 63 present, bit 61 a page of the file (not a private copy).
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  constexpr std::uint64_t kPresent = std::uint64_t{1} << 63, kFilePage = std::uint64_t{1} << 61;
  std::vector<std::uint64_t> entries(4096);
  std::uintptr_t runBegin = begin, at = begin;  // [runBegin, at): pages checked, none a private copy
  const auto releaseRun = [&] {
    if (at > runBegin) ::madvise(reinterpret_cast<void*>(runBegin), at - runBegin, MADV_DONTNEED);
  };
  while (at < end) {
    const std::size_t pages = std::min<std::size_t>(entries.size(), (end - at) / page);
    const auto wanted = static_cast<ssize_t>(pages * sizeof(std::uint64_t));
    if (::pread(fd, entries.data(), static_cast<std::size_t>(wanted), static_cast<off_t>(at / page * 8)) != wanted)
      break;
    for (std::size_t i = 0; i < pages; ++i) {
      if ((entries[i] & kPresent) != 0 && (entries[i] & kFilePage) == 0) {
        releaseRun();
        runBegin = at + page;
      }
      at += page;
    }
  }
  releaseRun();
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (slot_ >= 0) {
    const std::lock_guard<std::mutex> lock(registryMutex);
    if (cutShortAt()) cutShortHistory.push_back(cutShortMessage(*this));
    Slot& slot = slots[static_cast<std::size_t>(slot_)];
    slot.begin.store(0, std::memory_order_release);
    slot.end.store(0);
    slot.owner = nullptr;
  }
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace shotchain::io
