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
constexpr int kSideMultiple = 16;
constexpr int kMaxFrames = 1025;
constexpr int kMaxSteps = 1000;
constexpr double kMaxGuidance = 50.0;
constexpr double kMaxShift = 100.0;
constexpr double kMaxFps = 240.0;
constexpr std::uint64_t kMinMemoryBudget = 64ull << 20;
}  // namespace limits

// Where relative paths in the document (fallback images, model files) are resolved; empty
// means "do not look at the file system".
struct ValidationContext {
  std::filesystem::path baseFolder;
};

// The message for a frame count that is not 4k+1, or nothing when it is fine.
std::string frameCountProblem(int frames);

Diagnostics validateSettings(const SequenceSettings& settings);
// Rules of one shot on its own; `index` only names it in the paths ("shots[2].frames").
Diagnostics validateShot(const Shot& shot, std::size_t index, const ValidationContext& context = {});
// Every rule: settings, each shot, and the rules between shots (ids, tags, overlaps).
Diagnostics validateSequence(const Sequence& sequence, const ValidationContext& context = {});

std::string shotPath(std::size_t index, const std::string& field = {});

}  // namespace shotchain
