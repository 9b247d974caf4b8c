#pragma once

#include <ATen/core/Tensor.h>

#include "io/ggml_types.h"

namespace shotchain::io {

// The values of a ggml tensor stored as `type` (GGUF tensor data, little-endian), computed with tensor
// operations only, so they run where `raw` is (CPU or CUDA): float32 arithmetic in ggml's order (bit for bit
// what ggml's dequantize_row_* and gguf-py give), then converted to `as` (a floating type).
// raw: uint8, the blocks of all rows one after another, elements / blockElements * blockBytes bytes. shape:
// the tensor's shape in torch order (outermost first; GGUF lists it innermost first), whose innermost
// dimension is a whole number of blocks. The result has that shape, dtype `as` and raw's device; it shares
// raw's memory when no conversion is needed (F32 as float32, F16 as float16, BF16 as bfloat16).
// Throws std::invalid_argument naming what is wrong: a byte count that does not fit the shape, a row that is
// not a whole number of blocks, raw not uint8, `as` not floating.
at::Tensor dequantiseGgml(const at::Tensor& raw, GgmlType type, at::IntArrayRef shape, at::ScalarType as);

}  // namespace shotchain::io
