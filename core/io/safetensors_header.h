#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "io/dtype.h"

namespace shotchain::io {

// Any problem with a weights file: the message always starts with the file's name.
class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Largest header the reference implementation accepts (wan21.md §6 rule 1).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // byte offsets in the data buffer, end exclusive
  std::uint64_t end = 0;
  std::uint64_t elements = 0;

  std::uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::uint64_t headerBytes = 0;  // N
  std::uint64_t dataOffset = 0;   // 8 + N: where the data buffer starts in the file
  std::uint64_t fileSize = 0;
  std::vector<TensorEntry> tensors;  // sorted by data offset
  std::map<std::string, std::string> metadata;

  const TensorEntry* find(std::string_view name) const;
};

// Reads the 8-byte length prefix and checks it against the file size (rule 1). Returns N.
// `label` names the file in every message.
std::uint64_t checkSafetensorsPrefix(std::string_view label, std::span<const std::byte> first8, std::uint64_t fileSize);

// Parses and validates a header: `bytes` holds at least the first 8 + N bytes of a file whose
// total size is `fileSize`. Enforces every rule of wan21.md §6 (JSON object, known dtypes,
// integer shapes, shape × dtype size = offset span, sorted, no gaps or overlaps, buffer fully
// covered, overflow-safe arithmetic, duplicate keys, string-only __metadata__). Throws
// SafetensorsError naming `label` and the problem. Never allocates from unchecked numbers.
SafetensorsHeader parseSafetensorsHeader(std::string_view label, std::span<const std::byte> bytes,
                                         std::uint64_t fileSize);

// "[2, 3]" for messages.
std::string formatShape(const std::vector<std::uint64_t>& shape);

}  // namespace shotchain::io
