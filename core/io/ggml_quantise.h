#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/ggml_types.h"

namespace shotchain::io {

// The ggml encoding of `values` as `type`: the bytes of its blocks one after another (little-endian), as a GGUF
// file stores a tensor whose rows are whole blocks. values.size() must be a multiple of the type's
// blockElements.
// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 round exactly as ggml's quantize_row_*_ref (byte for byte what gguf-py's
// gguf.quants.quantize gives); Q2_K…Q6_K follow ggml's reference K-quantisers (the scale searches of
// make_qkx2_quants, make_q3_quants, make_qx_quants), close to ggml but not promised byte-equal; F16 and BF16
// round to nearest even; F32 is copied.
// Throws std::invalid_argument when the count is not a whole number of blocks, when a block-quantised type is
// given a value that is not finite, or when the values are too large for a block's fp16 scale.
std::vector<std::uint8_t> quantiseGgml(std::span<const float> values, GgmlType type);

}  // namespace shotchain::io
