#pragma once

#include <filesystem>
#include <string>

namespace shotchain::exporting {

// What a video file holds, found by demuxing it and decoding every frame of its first video
// stream with libavformat/libavcodec (no ffprobe needed): for tests and for checking a render.
struct VideoProbe {
  std::string codec;        // "h264", "mpeg4", …
  std::string pixelFormat;  // "yuv420p", …
  int width = 0;
  int height = 0;
  int packets = 0;        // compressed packets of the video stream
  int decodedFrames = 0;  // frames the decoder returned
  double fps = 0;         // the stream's average frame rate
  double durationSeconds = 0;
};

// Throws std::runtime_error naming the file when it cannot be opened or has no video stream.
VideoProbe probeVideo(const std::filesystem::path& path);

}  // namespace shotchain::exporting
