#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "continuity/cut_metrics.h"
#include "continuity/shot_stats.h"
#include "sequence/sequence.h"

namespace shotchain::models {
class VideoVae;
}

namespace shotchain::continuity {

struct Conditioning;

// Neighbouring frame pairs (and latent steps) at each side of a cut that form the within-shot baseline.
inline constexpr int kWithinShotWindow = 8;

// The statistics a later cut needs from a shot: `latent` is its final sampled latent [C, F', h, w]
// (after restoreHeldSlots and any colour anchoring), `heldLatentFrames` the conditioning slots at its
// start (Conditioning::heldFrames()), `frames` its kept output frames [3, T, H, W] in [−1, 1].
ShotStats computeShotStats(const std::string& shotId, const at::Tensor& latent, std::int64_t heldLatentFrames,
                           const at::Tensor& frames, int window = kWithinShotWindow);

// Everything measureCut reads. Shot N is "previous", shot N+1 "next", shot 1 "first".
struct CutInputs {
  int fromIndex = 0;
  int toIndex = 1;
  std::string fromShotId;
  std::string toShotId;
  std::string fromKey;
  std::string toKey;
  ContinuityMode mode = ContinuityMode::None;  // of shot N+1

  const ShotStats* previous = nullptr;         // required
  const ShotStats* next = nullptr;             // required (computeShotStats of shot N+1)
  const ShotStats* first = nullptr;            // optional: the "vs shot 1" figures stay empty without it
  at::Tensor previousTail;                     // shot N's last latent frame [C, 1, h, w] (a ring view)
  at::Tensor previousLastFrame;                // shot N's last output frame [3, H, W]
  at::Tensor nextLatent;                       // shot N+1's final latent [C, F', h', w']
  at::Tensor nextFrames;                       // shot N+1's kept output frames [3, T, H', W']
  const Conditioning* conditioning = nullptr;  // shot N+1's; null: no handoff figures
  const models::VideoVae* vae = nullptr;       // for the round-trip baseline; null: none
  int window = kWithinShotWindow;
};

// Every CutMetrics figure (continuity.md). Across the cut, the latent figures compare shot N's last
// latent frame with shot N+1's first generated one (the first after its held slots); the "vs shot 1"
// channel deltas compare the generated latents of N+1 and of shot 1 (what colour anchoring equalises).
// Pixel figures compare shot N's last output frame with N+1's first kept frame (resampled bicubically
// to N+1's size when the resolution changes); within-shot baselines are the medians over the last
// `window` pairs/steps of N and the first `window` of N+1. deltaEFirst compares N+1's first frame with
// shot 1's first frame. A ratio whose baseline median is 0 is 1 when the cut is 0 too, else +inf.
// With both frames given, the after-cut figures too (measureAfterCut).
CutMetrics measureCut(const CutInputs& inputs);

}  // namespace shotchain::continuity
