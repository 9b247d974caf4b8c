#include "io/fp8.h"

#include <cmath>
#include <limits>

namespace shotchain::io {
namespace {

// Decodes a sign/exponent/mantissa byte from first principles (not via bit tricks) so the tests
// can compare it against the fp16 bit maps of wan21.md §5.1 as an independent check.
float decode(unsigned byte, int mantissaBits, int bias, bool ieeeSpecials) {
  const int exponentBits = 7 - mantissaBits;
  const unsigned mantissaMask = (1u << mantissaBits) - 1u;
  const unsigned exponentMask = (1u << exponentBits) - 1u;
  const bool negative = (byte & 0x80u) != 0;
  const unsigned exponent = (byte >> mantissaBits) & exponentMask;
  const unsigned mantissa = byte & mantissaMask;
  const float sign = negative ? -1.0f : 1.0f;
  if (exponent == exponentMask) {
    if (ieeeSpecials) {
      if (mantissa == 0) return sign * std::numeric_limits<float>::infinity();
      return std::numeric_limits<float>::quiet_NaN();
    }
    if (mantissa == mantissaMask) return std::numeric_limits<float>::quiet_NaN();  // e4m3fn NaN
  }
  const float fraction = static_cast<float>(mantissa) / static_cast<float>(1u << mantissaBits);
  if (exponent == 0) return sign * std::ldexp(fraction, 1 - bias);
  return sign * std::ldexp(1.0f + fraction, static_cast<int>(exponent) - bias);
}

std::array<float, 256> buildTable(int mantissaBits, int bias, bool ieeeSpecials) {
  std::array<float, 256> table{};
  for (unsigned b = 0; b < 256; ++b) table[b] = decode(b, mantissaBits, bias, ieeeSpecials);
  return table;
}

}  // namespace

const std::array<float, 256>& float8E4M3Table() {
  static const std::array<float, 256> table = buildTable(3, 7, false);
  return table;
}

const std::array<float, 256>& float8E5M2Table() {
  static const std::array<float, 256> table = buildTable(2, 15, true);
  return table;
}

}  // namespace shotchain::io
