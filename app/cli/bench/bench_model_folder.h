#pragma once

#include <filesystem>
#include <string>

#include "models/wan/wan_config.h"
#include "sequence/sequence.h"

namespace shotchain::cli {

// The shots a residency benchmark renders; 0 = the config's default.
struct BenchSequenceShape {
  int shots = 10;
  int steps = 0;
  int width = 0;
  int height = 0;
  int frames = 0;
};

// `sequence`'s shots repeated in order until there are shape.shots of them (fresh ids, latent
// handoff between them), with the shape's overrides applied.
Sequence repeatShots(const Sequence& sequence, const BenchSequenceShape& shape);

// A chain of shots with latent handoff for a model: "demo" renders builtin:demo; "tiny", "1.3b"
// and "14b" write a random-weight model set of that DiT config (bfloat16 except tiny) into
// `modelsDir` (a ComfyUI-style folder) with a small random text encoder of the DiT's text width.
Sequence benchSequence(const std::string& config, const BenchSequenceShape& shape,
                       const std::filesystem::path& modelsDir);

// The same chain (832×480, 81 frames, 4 steps unless `shape` says) on the DiT in `ditFile`, whose config is
// `ditConfig`, with a random Wan 2.1 VAE and text encoder of its text width written into `modelsDir`.
Sequence benchSequenceReading(const std::string& name, const models::WanConfig& ditConfig,
                              const std::filesystem::path& ditFile, const BenchSequenceShape& shape,
                              const std::filesystem::path& modelsDir);

}  // namespace shotchain::cli
