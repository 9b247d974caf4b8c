#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace shotchain::io {

// One stored (uncompressed) entry of a zip archive: where its bytes lie in the file.
struct ZipEntry {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The central directory of the zip archive PyTorch's torch.save writes: every entry must be stored
// (method 0), unencrypted and lie inside the file; ZIP64 sizes and offsets are read. Throws
// SafetensorsError naming `label` and the entry. Nothing is allocated from an unchecked count.
std::map<std::string, ZipEntry, std::less<>> readZipDirectory(std::string_view label, std::span<const std::byte> file);

}  // namespace shotchain::io
