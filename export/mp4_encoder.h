#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace shotchain::exporting {

struct Mp4Encoding {
  std::string encoder;  // "libx264", or the fallback that was used (see warnings)
  int width = 0;        // encoded size: even, the largest frame's size rounded up
  int height = 0;
  int frames = 0;
  std::vector<std::string> warnings;  // fallbacks and letterboxing, one sentence each
};

// Encodes `pngFrames`, in order, into an H.264 (libx264, yuv420p, BT.709 limited range) MP4 at
// `fps` frames per second (1/fps is the time base; frame i has pts i), written atomically: the
// stream goes to a temporary file in `out`'s folder that is renamed over `out` once complete.
// Frames keep their pixels: an odd width or height is padded by one replicated edge pixel, and a
// frame smaller than the largest one is centred on black (a warning says so). Without libx264 it
// falls back to another H.264 encoder, then to MPEG-4 part 2, with a warning. Throws
// std::runtime_error naming `out` (or the PNG that could not be read); `out` is then untouched.
Mp4Encoding encodeSequenceMp4(const std::vector<std::filesystem::path>& pngFrames, double fps,
                              const std::filesystem::path& out);

}  // namespace shotchain::exporting
