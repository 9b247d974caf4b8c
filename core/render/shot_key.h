#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_files.h"
#include "sequence/sequence.h"

namespace shotchain::render {

// 128-bit FNV-1a style digest as 32 hex characters: keys and fingerprints, not security.
std::string digestHex(std::string_view bytes);

// What identifies a model file without reading its weights: its safetensors header (a .pt/.pth
// checkpoint's pickle) and size (other files, such as a tokenizer, by their bytes).
// Throws std::runtime_error naming the file when it cannot be read.
std::string fileFingerprint(const std::filesystem::path& path);

// Fingerprint of a model set: of each of its files (headers only; cheap), through `ofFile` (fileFingerprint,
// or a cache of it). Throws std::runtime_error naming the file.
std::string modelFingerprint(const models::ModelFiles& files,
                             const std::function<std::string(const std::filesystem::path&)>& ofFile = fileFingerprint);

// The key of every shot of `sequence`: a digest of everything that affects its result — the model
// files' fingerprint, prompt and negative prompt, size, frames, seed, the effective sampler
// settings, its continuity settings (and the fallback image's bytes), and, when it hands off or
// anchors colour, the keys it depends on (the last earlier shot with its tag; the first shot). Equal keys ⇒ identical
// output, so a render re-uses shots whose key it finds on disk.
std::vector<std::string> shotKeys(const Sequence& sequence, const std::string& modelFingerprint,
                                  const std::filesystem::path& sequenceDirectory);

}  // namespace shotchain::render
