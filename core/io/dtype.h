#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace shotchain::io {

// Every dtype string of the safetensors format (wan21.md §6). Which of them can become a tensor
// is a separate question (see tensorFromBytes in safetensors_reader.h).
enum class DType : std::uint8_t {
  Bool,
  U8,
  I8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  F16,
  BF16,
  F32,
  F64,
  C64,
  F8_E4M3,
  F8_E5M2,
  F8_E4M3FNUZ,
  F8_E5M2FNUZ,
  F8_E8M0,
  F4,
  F6_E2M3,
  F6_E3M2,
};

std::optional<DType> parseDType(std::string_view name);
std::string_view dtypeName(DType dtype);
// Size of one element in bits (4 and 6 for the sub-byte float formats, 8 for BOOL).
unsigned dtypeBits(DType dtype);
bool isFloat8(DType dtype);

}  // namespace shotchain::io
