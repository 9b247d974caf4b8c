#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/ggml_types.h"

namespace shotchain::io {

// One tensor of a GGUF file, checked against the file: its type is one ShotChain dequantises, its bytes lie
// inside the file and overlap no other tensor's.
struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<std::uint64_t> shape;  // torch order (the file lists dimensions innermost first)
  std::uint64_t elements = 0;
  std::uint64_t begin = 0;  // offset in the file
  std::uint64_t bytes = 0;
};

struct GgufHeader {
  std::uint32_t version = 0;
  std::uint64_t alignment = 32;
  std::uint64_t dataOffset = 0;         // where the tensor data starts in the file
  std::vector<GgufTensorInfo> tensors;  // in the file's order
  // Every key/value, as text: strings as they are, numbers in decimal, booleans as true/false, short arrays as
  // "[a, b]", long ones as "[N × type]".
  std::map<std::string, std::string> metadata;
};

// Parses and checks the whole container (versions 2 and 3, little-endian): every count, length, offset and
// size against the file's bytes before it is used, so no number from the file sizes an allocation unchecked.
// Refuses an unsupported tensor type by tensor name and type. Throws SafetensorsError naming `label`.
GgufHeader parseGgufHeader(std::string_view label, std::span<const std::byte> file);

// Whether the bytes start with the GGUF magic.
bool hasGgufMagic(std::span<const std::byte> first4);

}  // namespace shotchain::io
