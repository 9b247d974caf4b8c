#pragma once

// Where a shot's files live inside a render's output folder: the naming is core's
// (render/output_layout.h), so core (tail_latent.safetensors, shot.json) and export (frames)
// agree on one layout: OUT/shots/<NN>-<id>/frames/000001.png, NN the 1-based position.
#include <filesystem>
#include <string>

#include "render/output_layout.h"

namespace shotchain::exporting {

inline std::string sanitizedShotId(const std::string& id) { return render::safeFileComponent(id); }

inline std::string shotDirectoryName(int shotIndex, const std::string& id) {
  return render::shotDirectory({}, shotIndex, id).filename().string();
}

inline std::filesystem::path shotDirectory(const std::filesystem::path& out, int shotIndex, const std::string& id) {
  return render::shotDirectory(out, shotIndex, id);
}

inline std::filesystem::path framesDirectory(const std::filesystem::path& shotDir) { return shotDir / "frames"; }

// "000001.png" for the 1-based frame number `frame`.
inline std::string frameFileName(int frame) { return render::framePath({}, frame - 1).filename().string(); }

// OUT/shots/<NN>-<id>/frames/<frame>.png, `frame` 1-based.
inline std::filesystem::path frameFile(const std::filesystem::path& shotDir, int frame) {
  return render::framePath(shotDir, frame - 1);
}

}  // namespace shotchain::exporting
