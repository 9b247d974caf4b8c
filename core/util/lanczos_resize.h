#pragma once

#include <cstdint>
#include <vector>

namespace shotchain::util {

// 8-bit interleaved pixels (channels per pixel, rows tightly packed).
struct Pixels8 {
  int width = 0, height = 0, channels = 3;
  std::vector<std::uint8_t> data;
};

// Resizes with a Lanczos-3 filter widened by the reduction factor (an antialiased downscale), as
// Pillow's Image.resize(size, Image.LANCZOS) does it for 8-bit images: a horizontal pass then a vertical
// one, each skipped when that side keeps its size, with Pillow's 22-bit fixed-point weights and rounding,
// so the result equals Pillow's byte for byte (what Wan 2.2's i2v() gives its start image). Throws
// std::invalid_argument for empty sizes.
Pixels8 resizeLanczos(const Pixels8& in, int width, int height);

}  // namespace shotchain::util
