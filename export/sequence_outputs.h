#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace shotchain {
struct Sequence;
}
namespace shotchain::render {
struct RenderSummary;
}

namespace shotchain::exporting {

// One shot as the sequence-level outputs need it.
struct ShotOutput {
  std::string id;
  std::string name;
  std::string prompt;
  std::uint64_t seed = 0;
  std::string continuityMode;       // "none", "latent", … (toString(ContinuityMode))
  std::string key;                  // render key; empty when unknown
  std::filesystem::path directory;  // OUT/shots/<NN>-<id>
  int frames = 0;                   // frames the shot must have on disk; 0: the unbroken run 000001.png… found there
};

struct SequenceOutputs {
  std::filesystem::path outputDirectory;  // OUT
  std::string name;
  double fps = 16;
  std::vector<ShotOutput> shots;  // in sequence order
};

struct FinalizedOutputs {
  std::filesystem::path movie;     // OUT/sequence.mp4
  std::filesystem::path timeline;  // OUT/sequence.otio
  int frames = 0;
  std::string encoder;
  std::vector<std::string> warnings;
};

// Every enabled shot of `sequence` in order (index = position in sequence.shots), its directory
// from shotDirectory(out, index, id), and its key and frame count from `summary` where the render
// reported the shot (other shots, e.g. reused ones from an earlier render, are taken from disk).
SequenceOutputs describeOutputs(const Sequence& sequence, const render::RenderSummary& summary,
                                const std::filesystem::path& out);

// Writes OUT/sequence.mp4 from the PNG frames of every shot in order, then OUT/sequence.otio with
// one clip per shot, each file atomically. Throws std::runtime_error before writing anything when
// a shot's frames are missing, naming the shot and its frames folder.
FinalizedOutputs finalizeOutputs(const SequenceOutputs& outputs);

}  // namespace shotchain::exporting
