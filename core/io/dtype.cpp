#include "io/dtype.h"

#include <array>
#include <utility>

namespace shotchain::io {
namespace {

struct DTypeRow {
  DType dtype;
  std::string_view name;
  unsigned bits;
};

constexpr std::array<DTypeRow, 22> kRows{{
    {DType::Bool, "BOOL", 8},
    {DType::U8, "U8", 8},
    {DType::I8, "I8", 8},
    {DType::I16, "I16", 16},
    {DType::U16, "U16", 16},
    {DType::I32, "I32", 32},
    {DType::U32, "U32", 32},
    {DType::I64, "I64", 64},
    {DType::U64, "U64", 64},
    {DType::F16, "F16", 16},
    {DType::BF16, "BF16", 16},
    {DType::F32, "F32", 32},
    {DType::F64, "F64", 64},
    {DType::C64, "C64", 64},
    {DType::F8_E4M3, "F8_E4M3", 8},
    {DType::F8_E5M2, "F8_E5M2", 8},
    {DType::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {DType::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {DType::F8_E8M0, "F8_E8M0", 8},
    {DType::F4, "F4", 4},
    {DType::F6_E2M3, "F6_E2M3", 6},
    {DType::F6_E3M2, "F6_E3M2", 6},
}};

const DTypeRow& row(DType dtype) { return kRows[static_cast<std::size_t>(dtype)]; }

}  // namespace

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeRow& r : kRows)
    if (r.name == name) return r.dtype;
  return std::nullopt;
}

std::string_view dtypeName(DType dtype) { return row(dtype).name; }

unsigned dtypeBits(DType dtype) { return row(dtype).bits; }

bool isFloat8(DType dtype) {
  return dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2 || dtype == DType::F8_E4M3FNUZ ||
         dtype == DType::F8_E5M2FNUZ || dtype == DType::F8_E8M0;
}

}  // namespace shotchain::io
