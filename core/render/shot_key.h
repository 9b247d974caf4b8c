#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "models/model_files.h"
#include "resolve/resolved_shot.h"

namespace shotchain::render {

// Fingerprint of a model set: of each of its files (headers only; cheap), through `ofFile` (io::fileFingerprint,
// or a cache of it). Throws std::runtime_error naming the file.
std::string modelFingerprint(const models::ModelFiles& files,
                             const std::function<std::string(const std::filesystem::path&)>& ofFile);
std::string modelFingerprint(const models::ModelFiles& files);

// The key of every shot: a digest of everything that affects its result, as resolved — the model files'
// fingerprint, prompt and negative prompt, size, frames, seed, the sampler settings, the step cache when it
// runs, the LoRAs' fingerprints and strengths, the continuity settings (and the bytes of the pictures it reads),
// and, when it hands off or anchors colour, the keys it depends on. Equal keys ⇒ identical output, so a render
// re-uses shots whose key it finds on disk.
std::vector<std::string> shotKeys(const resolve::ResolvedSequence& resolved, const std::string& modelFingerprint);

}  // namespace shotchain::render
