#include "io/ggml_dequant.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shotchain::io {
// Unity builds compile this file together with the folder's others: its helpers keep to a namespace of their own.
namespace ggml_dequant_parts {
namespace {

// Every function below takes the blocks as a uint8 [blocks, blockBytes] tensor and returns their values
// [blocks, blockElements] as float32. The field offsets are those of ggml-common.h's block structs; the products
// and sums are those of ggml's dequantize_row_*, in float32 and in the same order, so the results are the same
// floats (most products are exact anyway: an fp16 scale times a few-bit integer fits in float32). Each operation
// has operands of one dtype: ATen's kernels for mixed dtypes are several times slower.

std::string shapeText(at::IntArrayRef shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + "]";
}

// Bytes [begin, end) of every block.
at::Tensor bytesAt(const at::Tensor& blocks, std::int64_t begin, std::int64_t end) {
  return blocks.slice(1, begin, end);
}

// The fp16 at byte `offset` of every block, as float32 [blocks, 1].
at::Tensor halfAt(const at::Tensor& blocks, std::int64_t offset) {
  return bytesAt(blocks, offset, offset + 2).contiguous().view(at::kHalf).to(at::kFloat);
}

// Each byte of `bytes` shifted right by 0, step, 2·step… (below 8) along a new dimension `dim`, masked with
// `mask`: the bit fields of the bytes, uint8.
at::Tensor bitFields(const at::Tensor& bytes, std::int64_t dim, std::int64_t step, std::int64_t mask) {
  std::vector<std::int64_t> shiftsShape(static_cast<std::size_t>(bytes.dim()) + 1, 1);
  shiftsShape[static_cast<std::size_t>(dim)] = 8 / step;
  const at::Tensor shifts = at::arange(0, 8, step, bytes.options()).view(shiftsShape);
  return at::bitwise_right_shift(bytes.unsqueeze(dim), shifts).bitwise_and_(mask);
}

// low | high << bits, uint8.
at::Tensor joinBits(const at::Tensor& low, const at::Tensor& high, std::int64_t bits) {
  return at::bitwise_or(low, at::bitwise_left_shift(high, bits));
}

// Unsigned codes minus `offset`, as int8: uint8 arithmetic wraps, so the difference read as int8 is the signed
// code (for codes and offsets below 128).
at::Tensor centred(const at::Tensor& codes, std::int64_t offset) { return at::sub(codes, offset).view(at::kChar); }

// Integer codes times a float32 scale (broadcast), plus a float32 shift when one is given, as float32.
at::Tensor scaled(const at::Tensor& codes, const at::Tensor& scale, const at::Tensor* shift = nullptr) {
  at::Tensor values = codes.to(at::kFloat);
  values.mul_(scale);
  if (shift != nullptr) values.add_(*shift);
  return values;
}

// Q4_0: d, 16 bytes of 4-bit codes (values 0–15 in the low nibbles, 16–31 in the high ones); y = (q − 8)·d.
at::Tensor dequantQ4_0(const at::Tensor& blocks) {
  const at::Tensor codes = bitFields(bytesAt(blocks, 2, 18), 1, 4, 15).reshape({blocks.size(0), 32});
  return scaled(centred(codes, 8), halfAt(blocks, 0));
}

// Q4_1: d, m, the codes as Q4_0; y = q·d + m.
at::Tensor dequantQ4_1(const at::Tensor& blocks) {
  const at::Tensor codes = bitFields(bytesAt(blocks, 4, 20), 1, 4, 15).reshape({blocks.size(0), 32});
  const at::Tensor minimum = halfAt(blocks, 2);
  return scaled(codes, halfAt(blocks, 0), &minimum);
}

// The 5-bit codes of Q5_0 / Q5_1: low nibbles as Q4_0 from `lowAt`, bit 4 of value j is bit j of the
// little-endian 32-bit word at `highAt`.
at::Tensor fiveBitCodes(const at::Tensor& blocks, std::int64_t highAt, std::int64_t lowAt) {
  const std::int64_t n = blocks.size(0);
  const at::Tensor low = bitFields(bytesAt(blocks, lowAt, lowAt + 16), 1, 4, 15).reshape({n, 32});
  const at::Tensor high = bitFields(bytesAt(blocks, highAt, highAt + 4), 2, 1, 1).reshape({n, 32});
  return joinBits(low, high, 4);
}

// Q5_0: d, qh, qs; y = (q − 16)·d.
at::Tensor dequantQ5_0(const at::Tensor& blocks) {
  return scaled(centred(fiveBitCodes(blocks, 2, 6), 16), halfAt(blocks, 0));
}

// Q5_1: d, m, qh, qs; y = q·d + m.
at::Tensor dequantQ5_1(const at::Tensor& blocks) {
  const at::Tensor minimum = halfAt(blocks, 2);
  return scaled(fiveBitCodes(blocks, 4, 8), halfAt(blocks, 0), &minimum);
}

// Q8_0: d, 32 signed bytes; y = q·d.
at::Tensor dequantQ8_0(const at::Tensor& blocks) {
  return scaled(bytesAt(blocks, 2, 34).view(at::kChar), halfAt(blocks, 0));
}

// The K types: integer `codes` [blocks, 256] in `count` sub-blocks, times a float32 scale per sub-block
// [blocks, count], less a float32 min per sub-block when one is given (adding its negation, exactly the same).
at::Tensor scaleSubBlocks(const at::Tensor& codes, std::int64_t count, const at::Tensor& scale,
                          const at::Tensor* minimum) {
  const std::int64_t n = codes.size(0);
  const at::Tensor grouped = codes.view({n, count, 256 / count});
  if (minimum == nullptr) return scaled(grouped, scale.unsqueeze(2)).view({n, 256});
  const at::Tensor shift = minimum->neg().unsqueeze(2);
  return scaled(grouped, scale.unsqueeze(2), &shift).view({n, 256});
}

// The 2-bit fields of 64 bytes: per half of the block, the four bit pairs of bytes 32h…32h+31 give values
// 128h + 32j + l (pair j of byte l).
at::Tensor twoBitCodes(const at::Tensor& bytes) {
  const std::int64_t n = bytes.size(0);
  return bitFields(bytes.view({n, 2, 32}), 2, 2, 3).reshape({n, 256});
}

// Q2_K: 16 bytes of 4-bit scale (low) and min (high) per 16 values, 64 bytes of 2-bit codes, d, dmin;
// y = (d·scale)·q − dmin·min.
at::Tensor dequantQ2_K(const at::Tensor& blocks) {
  const at::Tensor scales = bytesAt(blocks, 0, 16);
  const at::Tensor scale = at::bitwise_and(scales, 15).to(at::kFloat).mul_(halfAt(blocks, 80));
  const at::Tensor minimum = at::bitwise_right_shift(scales, 4).to(at::kFloat).mul_(halfAt(blocks, 82));
  return scaleSubBlocks(twoBitCodes(bytesAt(blocks, 16, 80)), 16, scale, &minimum);
}

// Q3_K: hmask (bit 4h + j of byte l: the third bit of value 128h + 32j + l), 2-bit codes as Q2_K, 16 signed
// 6-bit scales in 12 bytes, d. q = low bits − 4 where the hmask bit is clear; y = (d·scale)·q.
at::Tensor dequantQ3_K(const at::Tensor& blocks) {
  const std::int64_t n = blocks.size(0);
  const at::Tensor packed = bytesAt(blocks, 96, 108);
  // Scale i: its low 4 bits in byte i % 8 (low nibble for i < 8, high above), its top 2 bits in byte
  // 8 + i % 4 at bit 2·(i / 4).
  const at::Tensor scaleLow = bitFields(packed.slice(1, 0, 8), 1, 4, 15).reshape({n, 16});
  const at::Tensor scaleHigh = bitFields(packed.slice(1, 8, 12), 1, 2, 3).reshape({n, 16});
  const at::Tensor scale = centred(joinBits(scaleLow, scaleHigh, 4), 32).to(at::kFloat).mul_(halfAt(blocks, 108));
  const at::Tensor third = bitFields(bytesAt(blocks, 0, 32), 1, 1, 1).reshape({n, 256});
  const at::Tensor codes = centred(joinBits(twoBitCodes(bytesAt(blocks, 32, 96)), third, 2), 4);
  return scaleSubBlocks(codes, 16, scale, nullptr);
}

// The eight 6-bit scales and mins of Q4_K / Q5_K in 12 bytes a, b, c (4 each): for j < 4 scale j is a[j]'s
// low 6 bits and min j b[j]'s; for j ≥ 4 their low 4 bits are c[j−4]'s low / high nibble and their top 2
// bits the top 2 of a[j−4] / b[j−4]. Returns d·scale and dmin·min, float32 [blocks, 8].
std::pair<at::Tensor, at::Tensor> kScalesAndMins(const at::Tensor& blocks) {
  const at::Tensor a = bytesAt(blocks, 4, 8);
  const at::Tensor b = bytesAt(blocks, 8, 12);
  const at::Tensor c = bytesAt(blocks, 12, 16);
  const at::Tensor scale =
      at::cat({at::bitwise_and(a, 63), joinBits(at::bitwise_and(c, 15), at::bitwise_right_shift(a, 6), 4)}, 1);
  const at::Tensor minimum =
      at::cat({at::bitwise_and(b, 63), joinBits(at::bitwise_right_shift(c, 4), at::bitwise_right_shift(b, 6), 4)}, 1);
  return {scale.to(at::kFloat).mul_(halfAt(blocks, 0)), minimum.to(at::kFloat).mul_(halfAt(blocks, 2))};
}

// The 4-bit fields of 128 bytes: bytes 32p…32p+31 hold values 64p + l (low nibble) and 64p + 32 + l (high).
at::Tensor fourBitCodes(const at::Tensor& bytes) {
  const std::int64_t n = bytes.size(0);
  return bitFields(bytes.view({n, 4, 32}), 2, 4, 15).reshape({n, 256});
}

// Q4_K: d, dmin, scales, 4-bit codes; y = (d·scale)·q − dmin·min per 32 values.
at::Tensor dequantQ4_K(const at::Tensor& blocks) {
  const auto [scale, minimum] = kScalesAndMins(blocks);
  return scaleSubBlocks(fourBitCodes(bytesAt(blocks, 16, 144)), 8, scale, &minimum);
}

// Q5_K: as Q4_K with a fifth bit: bit k of qh[l] belongs to value 32k + l.
at::Tensor dequantQ5_K(const at::Tensor& blocks) {
  const std::int64_t n = blocks.size(0);
  const auto [scale, minimum] = kScalesAndMins(blocks);
  const at::Tensor fifth = bitFields(bytesAt(blocks, 16, 48), 1, 1, 1).reshape({n, 256});
  const at::Tensor codes = joinBits(fourBitCodes(bytesAt(blocks, 48, 176)), fifth, 4);
  return scaleSubBlocks(codes, 8, scale, &minimum);
}

// Q6_K: ql (per half h: value 128h + 64k + l, l < 64, is nibble k of byte 64h + l), qh (value 128h + 32k + l
// has bits 2k, 2k+1 of byte 32h + l as its top two), 16 int8 scales, d; y = (d·scale)·(q − 32).
at::Tensor dequantQ6_K(const at::Tensor& blocks) {
  const std::int64_t n = blocks.size(0);
  const at::Tensor low = bitFields(bytesAt(blocks, 0, 128).view({n, 2, 64}), 2, 4, 15).reshape({n, 256});
  const at::Tensor high = twoBitCodes(bytesAt(blocks, 128, 192));
  const at::Tensor scale = bytesAt(blocks, 192, 208).view(at::kChar).to(at::kFloat).mul_(halfAt(blocks, 208));
  return scaleSubBlocks(centred(joinBits(low, high, 4), 32), 16, scale, nullptr);
}

at::Tensor dequantBlocks(const at::Tensor& blocks, GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
      return dequantQ4_0(blocks);
    case GgmlType::Q4_1:
      return dequantQ4_1(blocks);
    case GgmlType::Q5_0:
      return dequantQ5_0(blocks);
    case GgmlType::Q5_1:
      return dequantQ5_1(blocks);
    case GgmlType::Q8_0:
      return dequantQ8_0(blocks);
    case GgmlType::Q2_K:
      return dequantQ2_K(blocks);
    case GgmlType::Q3_K:
      return dequantQ3_K(blocks);
    case GgmlType::Q4_K:
      return dequantQ4_K(blocks);
    case GgmlType::Q5_K:
      return dequantQ5_K(blocks);
    case GgmlType::Q6_K:
      return dequantQ6_K(blocks);
    default:
      throw std::invalid_argument("not a block-quantised ggml type: " + std::string(ggmlTraits(type).name));
  }
}

// F32, F16 and BF16 are the bytes of a torch dtype; a view needs them aligned to the element size.
at::Tensor plainValues(at::Tensor raw, at::ScalarType stored) {
  const auto size = static_cast<std::int64_t>(c10::elementSize(stored));
  if (reinterpret_cast<std::uintptr_t>(raw.data_ptr()) % static_cast<std::uintptr_t>(size) != 0 ||
      raw.storage_offset() % size != 0)
    raw = raw.clone();
  return raw.view(stored);
}

}  // namespace
}  // namespace ggml_dequant_parts

at::Tensor dequantiseGgml(const at::Tensor& raw, GgmlType type, at::IntArrayRef shape, at::ScalarType as) {
  namespace parts = ggml_dequant_parts;
  const GgmlTypeTraits& traits = ggmlTraits(type);
  const std::string what =
      "dequantising a ggml " + std::string(traits.name) + " tensor of shape " + parts::shapeText(shape) + ": ";
  if (raw.scalar_type() != at::kByte)
    throw std::invalid_argument(what + "the raw data must be uint8, not " +
                                std::string(c10::toString(raw.scalar_type())));
  if (!at::isFloatingType(as))
    throw std::invalid_argument(what + "cannot produce " + std::string(c10::toString(as)) + " (not a floating type)");

  std::int64_t elements = 1;
  for (const std::int64_t size : shape) {
    if (size < 0) throw std::invalid_argument(what + "negative dimension");
    if (size != 0 && elements > std::numeric_limits<std::int64_t>::max() / size)
      throw std::invalid_argument(what + "too many elements");
    elements *= size;
  }
  const std::int64_t rowElements = shape.empty() ? 1 : shape.back();
  const auto blockElements = static_cast<std::int64_t>(traits.blockElements);
  const auto blockBytes = static_cast<std::int64_t>(traits.blockBytes);
  if (rowElements % blockElements != 0)
    throw std::invalid_argument(what + "the innermost dimension " + std::to_string(rowElements) +
                                " is not a multiple of the block size " + std::to_string(blockElements));
  const std::int64_t blocks = elements / blockElements;
  if (blocks > std::numeric_limits<std::int64_t>::max() / blockBytes)
    throw std::invalid_argument(what + "too many elements");
  if (raw.numel() != blocks * blockBytes)
    throw std::invalid_argument(what + "expected " + std::to_string(blocks * blockBytes) + " bytes (" +
                                std::to_string(blocks) + " blocks of " + std::to_string(blockBytes) + "), got " +
                                std::to_string(raw.numel()));
  if (elements == 0) return at::empty(shape, raw.options().dtype(as));

  const at::Tensor bytes = raw.contiguous().view({-1});
  switch (type) {
    case GgmlType::F32:
      return parts::plainValues(bytes, at::kFloat).to(as).view(shape);
    case GgmlType::F16:
      return parts::plainValues(bytes, at::kHalf).to(as).view(shape);
    case GgmlType::BF16:
      return parts::plainValues(bytes, at::kBFloat16).to(as).view(shape);
    default:
      break;
  }
  // A chunk of blocks at a time: the float32 intermediates of a chunk stay small (in cache on the CPU, where
  // fresh full-size buffers would cost more in page faults than the arithmetic; bounded on a GPU), and only the
  // result has the tensor's size.
  const at::Tensor all = bytes.view({blocks, blockBytes});
  at::Tensor values = at::empty({blocks, blockElements}, raw.options().dtype(as));
  const std::int64_t chunkElements = std::int64_t{1} << (raw.is_cpu() ? 20 : 24);
  const std::int64_t chunk = std::max<std::int64_t>(1, chunkElements / blockElements);
  for (std::int64_t first = 0; first < blocks; first += chunk) {
    const std::int64_t end = std::min(blocks, first + chunk);
    values.slice(0, first, end).copy_(parts::dequantBlocks(all.slice(0, first, end), type));
  }
  return values.view(shape);
}

}  // namespace shotchain::io
