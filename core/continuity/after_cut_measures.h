#pragma once

#include <ATen/core/Tensor.h>

#include "continuity/cut_metrics.h"
#include "continuity/shot_stats.h"

namespace shotchain::continuity {

// How many frames after a cut the after-cut figures look at.
inline constexpr int kAfterCutFrames = 8;
// A change below one 8-bit level cannot be seen in the written frames: both sides of the flash ratio
// count at least this much, so a still shot's invisible noise does not read as a flash (and a
// constant clip gives exactly 1).
inline constexpr double kVisibleChange = 1.0 / 255.0;

// The after-cut figures of CutMetrics, from shot N's statistics and N+1's kept frames [3, T, H, W]
// in [−1, 1], over the first n = min(8, T) frames f0…f(n−1) of N+1:
// - flash: max meanRgbChange(fi, fi+1) over those frames, over the median of the same change for
//   shot N's last `window` pairs (ShotStats::tailChanges) and N+1's pairs after those frames (at most
//   `window`); each side at least kVisibleChange. Left out when N's record has no tailChanges.
// - colourDrift / spreadDrift: max over fi of the ΔE76 between fi's mean Lab (Lab spread) and that
//   of N's last frame; spreadDrift left out when N's record has no spread.
// - structure: min ssimLuma(fi, fi+1) over the in-shot median SSIM of the same pairs as flash (N's
//   from tailPairs); left out when that median is not positive.
// A shot of one frame gets the drifts only.
void measureAfterCut(const ShotStats& previous, const at::Tensor& nextFrames, int window, CutMetrics& into);

}  // namespace shotchain::continuity
