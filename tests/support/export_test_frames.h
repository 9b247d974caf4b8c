#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "render/render_events.h"

namespace shotchain::testing {

// A frame whose every pixel depends on (x, y, seed), so two frames compare meaningfully.
inline render::RgbFrame syntheticFrame(int width, int height, int seed) {
  render::RgbFrame frame;
  frame.width = width;
  frame.height = height;
  frame.rgb.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  std::size_t i = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      frame.rgb[i++] = static_cast<std::uint8_t>((x * 7 + seed * 13) & 0xff);
      frame.rgb[i++] = static_cast<std::uint8_t>((y * 11 + seed * 5) & 0xff);
      frame.rgb[i++] = static_cast<std::uint8_t>((x * y + seed * 29) & 0xff);
    }
  return frame;
}

// Names of files in `folder` that look like an interrupted atomic write (".<name>.tmp-XXXXXX").
inline std::string temporaryFilesIn(const std::filesystem::path& folder) {
  std::string found;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().filename().string().find(".tmp-") != std::string::npos)
      found += entry.path().filename().string() + " ";
  return found;
}

}  // namespace shotchain::testing
