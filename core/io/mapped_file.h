#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace shotchain::io {

// A whole file mapped copy-on-write (writes through a tensor view never reach the file).
// Held by shared_ptr: every zero-copy tensor view keeps its mapping alive.
class MappedFile {
 public:
  // Throws SafetensorsError("<file>: cannot open: <reason>") on failure.
  static std::shared_ptr<const MappedFile> map(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::byte* mutableData() const { return data_; }  // for views; pages are private to this process
  std::uint64_t size() const { return size_; }

 private:
  MappedFile(std::byte* data, std::size_t size) : data_(data), size_(size) {}
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace shotchain::io
