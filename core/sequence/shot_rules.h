#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "sequence/diagnostic.h"
#include "sequence/edits.h"
#include "sequence/sequence.h"

namespace shotchain {

// The shot "Add Shot" puts after shot `previous` (the last shot when `previous` is past the end):
// it continues that shot through a latent handoff on its tag, at its size and length, with its
// prompt, negative prompt and seed, under an unused id and the name "Shot N". In an empty sequence:
// the defaults, at the demo model's 64×64 when the model is builtin.
Shot defaultShotAfter(const Sequence& sequence, std::size_t previous);

// A fallback image means blend: a shot that takes no handoff would ignore the image, so it switches
// to blend; a shot that takes one keeps its mode. An empty path clears the image and keeps the mode.
void setFallbackImage(Shot& shot, std::string path);

// A picture dropped on a shot: a shot that takes no handoff starts from it (start_image); a shot that
// continues its predecessor keeps its mode and blends the picture with the handoff (its fallback image).
// Returns the document field it set ("start_image" or "continuity.fallback_image").
const char* placeDroppedImage(Shot& shot, std::string path);

// Sets shot `index`'s start picture (`end` false) or end picture. A keyframe shared at a cut (shot N's end_image
// names the file shot N+1's start_image names) is one picture: changed from either side, both follow, in one edit.
Edit keyframeEdit(const Sequence& sequence, std::size_t index, bool end, const std::string& path);

// How a file the user picked is written into the document: relative to `baseFolder` (the sequence
// file's folder) when it lies inside it, else absolute; absolute when `baseFolder` is empty.
std::string documentPath(const std::filesystem::path& baseFolder, const std::filesystem::path& file);

// Where "split at the playhead" cuts `shot` when the playhead is `offset` frames into it: the latent
// boundary (a multiple of `frameStep`, the model's pixel frames per latent frame) nearest the playhead,
// leaving each part at least two latents (the shared one and a new one); the middle boundary when the
// playhead is outside the shot.
int splitFrameNear(const Shot& shot, int offset, int frameStep);

// The shot whose frames hold sequence frame `frame` on the gapless track; nullopt past either end.
std::optional<std::size_t> shotAtFrame(const Sequence& sequence, int frame);

struct SplitResult {
  std::optional<Sequence> sequence;  // set exactly when the split is possible
  Diagnostics errors;                // otherwise why not, naming the shot and the frame
  bool ok() const { return sequence.has_value(); }
};

// Splits shot `shotId` at `frame`, counted from its first frame; the input is not changed.
// The first part keeps everything of the shot (id, name, prompt, seed, continuity) and ends at frame
// `frame`. The second part starts at that same frame and continues the first through a one-latent
// handoff: a new shot (id `newId`, or an unused one when empty) named "<name> (2)" with the same
// prompt, seed, size and sampler settings, continuity latent on the same tag without fallback image,
// prefix or condition noise. The shared frame makes the lengths add up to the original plus one, each
// part whole latents: `frame` is a multiple of `frameStep` that leaves each part at least two latents.
// A disabled shot is not split.
SplitResult splitShot(const Sequence& sequence, const std::string& shotId, int frame, int frameStep,
                      const std::string& newId = {});

}  // namespace shotchain

namespace shotchain {

// The enabled shot before `index` that writes the tag shot `index` reads (−1: none).
int predecessorByTag(const Sequence& sequence, std::size_t index);
// The shots whose latents a stream shot at `index` continues, oldest first: its predecessor and, while
// that one streams too, the predecessor's predecessor and so on. Empty when the shot has no predecessor.
std::vector<int> streamChainBefore(const Sequence& sequence, std::size_t index);

}  // namespace shotchain
