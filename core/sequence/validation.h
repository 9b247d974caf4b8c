#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "sequence/diagnostic.h"
#include "sequence/sequence.h"

namespace shotchain {

namespace limits {
constexpr int kMinSide = 16;
constexpr int kMaxSide = 4096;
constexpr int kMaxFrames = 1025;
constexpr int kMaxSteps = 1000;
constexpr double kMaxLoraStrength = 10.0;
constexpr double kMaxCacheThreshold = 10.0;  // sampler.cache.threshold (the published ones are 0.02…0.5)
constexpr int kMaxStreamWindow = 1024;       // latent frames (the RoPE table of Wan has 1024 positions)
constexpr double kMaxGuidance = 50.0;
constexpr double kMinShift = 0.1;
constexpr double kMaxShift = 100.0;
constexpr double kMinFps = 1.0;  // the MP4's frame rate is a fraction n/65536 of at least one frame a second
constexpr double kMaxFps = 240.0;
// A shot's folder is shots/<NN>-<id>: the id must leave the name well inside the 255-byte limit.
constexpr std::size_t kMaxIdLength = 128;
constexpr std::uint64_t kMinMemoryBudget = 64ull << 20;
}  // namespace limits

// Where relative paths in the document (fallback images, model files) are resolved; empty
// means "do not look at the file system".
// A missing file (a fallback image moved away) is a warning while editing, so the document still
// opens; a render sets `missingFilesAreErrors` and refuses it before any work.
struct ValidationContext {
  std::filesystem::path baseFolder;
  bool missingFilesAreErrors = false;
};

// The document's own rules: types, ranges, ids, files it names. The rules that depend on the model set — frame
// counts and sizes its geometry takes, what runs with what — are the resolver's (resolve/resolve_sequence.h).
Diagnostics validateSettings(const SequenceSettings& settings);
// Rules of one shot on its own; `index` only names it in the paths ("shots[2].frames").
Diagnostics validateShot(const Shot& shot, std::size_t index, const ValidationContext& context = {});
// Every rule: settings, each shot, and the rules between shots (ids, tags, overlaps).
Diagnostics validateSequence(const Sequence& sequence, const ValidationContext& context = {});

std::string shotPath(std::size_t index, const std::string& field = {});

}  // namespace shotchain
