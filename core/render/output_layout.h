#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace shotchain::render {

// Where a render puts its files: <out>/shots/<NN>-<id>/{frames/000001.png…,
// tail_latent.safetensors, shot.json}; <out>/{sequence.mp4, report.json, report.csv, sequence.otio}.
// Header-only and Qt-free so core (which writes shot.json and the tail) and export (which writes
// PNG, MP4 and OTIO) agree on one layout.
inline std::string safeFileComponent(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? std::string("shot") : out;
}

inline std::filesystem::path shotDirectory(const std::filesystem::path& out, int index, const std::string& id) {
  char number[16];
  std::snprintf(number, sizeof number, "%02d", index + 1);
  return out / "shots" / (std::string(number) + "-" + safeFileComponent(id));
}

inline std::filesystem::path framePath(const std::filesystem::path& shotDir, int frameIndex) {
  char name[32];
  std::snprintf(name, sizeof name, "%06d.png", frameIndex + 1);
  return shotDir / "frames" / name;
}

inline std::filesystem::path tailLatentPath(const std::filesystem::path& shotDir) {
  return shotDir / "tail_latent.safetensors";
}
inline std::filesystem::path shotRecordPath(const std::filesystem::path& shotDir) { return shotDir / "shot.json"; }

}  // namespace shotchain::render
