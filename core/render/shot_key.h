#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "models/model_files.h"
#include "resolve/resolved_shot.h"

namespace shotchain::render {

// A file's identity in a key: io::contentDigest (the bytes' digest, cached per file stamp), or a stand-in.
using FileDigests = std::function<std::string(const std::filesystem::path&)>;

// Fingerprint of a model set: the digests of each of its files through `ofFile` (io::contentDigest by
// default). Throws std::runtime_error naming the file.
std::string modelFingerprint(const models::ModelFiles& files, const FileDigests& ofFile);
std::string modelFingerprint(const models::ModelFiles& files);

// The key of every shot: a digest of everything that affects its result, as resolved — the model files'
// fingerprint, prompt and negative prompt, size, frames, seed, the sampler settings, the step cache when it
// runs (with its calibration file's digest), the LoRAs' digests and strengths, the continuity settings (and the
// digests of the pictures it reads), and, when it hands off or anchors colour, the keys it depends on. Equal
// keys ⇒ identical output, so a render re-uses shots whose key it finds on disk.
std::vector<std::string> shotKeys(const resolve::ResolvedSequence& resolved, const std::string& modelFingerprint,
                                  const FileDigests& ofFile);
std::vector<std::string> shotKeys(const resolve::ResolvedSequence& resolved, const std::string& modelFingerprint);

}  // namespace shotchain::render
