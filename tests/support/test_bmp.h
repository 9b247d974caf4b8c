#pragma once

#include <cstdint>
#include <string>

#include "render/render_events.h"

namespace shotchain::testing {

// A picture as a 24-bit BMP file (what validation and the shot key read).
inline std::string bmpOf(const render::RgbFrame& f) {
  const int row = (f.width * 3 + 3) / 4 * 4;
  const std::uint32_t size = 54 + static_cast<std::uint32_t>(row * f.height);
  std::string out(size, '\0');
  auto put = [&](std::size_t at, std::uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
  };
  out[0] = 'B';
  out[1] = 'M';
  put(2, size, 4);
  put(10, 54, 4);
  put(14, 40, 4);
  put(18, static_cast<std::uint32_t>(f.width), 4);
  put(22, static_cast<std::uint32_t>(f.height), 4);
  put(26, 1, 2);
  put(28, 24, 2);
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x)
      for (int c = 0; c < 3; ++c)
        out[54 + static_cast<std::size_t>((f.height - 1 - y) * row + x * 3 + c)] =
            static_cast<char>(f.rgb[static_cast<std::size_t>((y * f.width + x) * 3 + (2 - c))]);
  return out;
}

}  // namespace shotchain::testing
