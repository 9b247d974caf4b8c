#pragma once

#include <filesystem>

#include "render/render_events.h"

namespace shotchain::exporting {

// Writes `frame` as an 8-bit RGB PNG, atomically (temporary file in the same folder, then
// rename). The folder must exist. Throws FileWriteError naming the file; std::invalid_argument
// naming the file when the frame's size and pixel buffer disagree.
void writePngFrame(const render::RgbFrame& frame, const std::filesystem::path& path);

// Reads a PNG (or any image Qt reads) into 8-bit RGB. Throws std::runtime_error naming the file.
render::RgbFrame readPngFrame(const std::filesystem::path& path);

}  // namespace shotchain::exporting
