#pragma once

#include <filesystem>
#include <string>

namespace shotchain::io {

// What identifies a weights file without reading its weights: its safetensors header (a .pt/.pth
// checkpoint's pickle) and size (other files, such as a tokenizer, by their bytes), as a digest.
// Throws std::runtime_error naming the file when it cannot be read.
std::string fileFingerprint(const std::filesystem::path& path);

}  // namespace shotchain::io
