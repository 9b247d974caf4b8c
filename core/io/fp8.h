#pragma once

#include <array>
#include <cstdint>

namespace shotchain::io {

// Software decoding of the 8-bit float formats libtorch 1.13 lacks (wan21.md §5.1). Each table
// maps all 256 byte values to the exact float they encode (every value is exactly representable).
// F8_E4M3 = float8_e4m3fn: bias 7, no infinities, NaN only at 0x7F/0xFF.
const std::array<float, 256>& float8E4M3Table();
// F8_E5M2: bias 15, IEEE-like with infinities and NaNs (the top byte of an fp16).
const std::array<float, 256>& float8E5M2Table();

}  // namespace shotchain::io
