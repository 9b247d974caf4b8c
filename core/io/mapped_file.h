#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace shotchain::io {

// A whole file mapped copy-on-write (writes through a tensor view never reach the file).
// Held by shared_ptr: every zero-copy tensor view keeps its mapping alive.
//
// A file cut short while it is mapped (rewritten, truncated by another program) would kill the process with
// SIGBUS at the first read past its new end. Instead, the pages from there read as zeros and the mapping says
// where it was cut (cutShortAt); whoever reads weights from it checks cutShortProblem() before trusting them.
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
  const std::filesystem::path& path() const { return path_; }
  // Gives back this process's pages of bytes [offset, offset + length) that someone copied elsewhere (a tensor
  // converted to another dtype), so that they stop counting in its memory; a page shared with bytes outside the
  // range, or written through a view, is kept. Reading the bytes again reads the file again.
  void releasePages(std::uint64_t offset, std::uint64_t length) const;
  // The offset from which the file was found cut short while mapped (its bytes from there read as zeros).
  std::optional<std::uint64_t> cutShortAt() const;

 private:
  MappedFile(std::byte* data, std::size_t size, std::filesystem::path path);
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
  int slot_ = -1;  // in the registry the SIGBUS handler reads; −1: not registered (empty, or the registry is full)
};

// A point in this process's history of mapped files found cut short, for cutShortProblem.
std::size_t cutShortMark();
// "<file>: was cut short while in use (…)" for the first mapping alive now that was found cut short, else for the
// first one found cut short and gone (its weights copied elsewhere) since `mark`; empty when there is none.
std::string cutShortProblem(std::size_t mark);

}  // namespace shotchain::io
