#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "continuity/shot_stats.h"

namespace shotchain::continuity {

// Resamples a latent [C, F, h, w] to [C, F, height, width] in latent space, bicubic frame by frame
// (align_corners false). Returns `latent` itself (no copy) when the size already matches.
at::Tensor resampleLatent(const at::Tensor& latent, std::int64_t height, std::int64_t width);

// Per-channel mean and population std of a latent [C, F, h, w] over its frames and pixels.
ChannelStats latentChannelStats(const at::Tensor& latent);

// Colour anchoring (AdaIN): frames [fromFrame, F) of `latent` [C, F, h, w] are moved so that their
// per-channel mean and std equal `reference`'s: (x − μ)/σ·σ_ref + μ_ref, with μ, σ measured over those
// frames. Earlier frames (held conditioning) are kept. Returns a new tensor; `latent` is untouched.
at::Tensor anchorChannelStats(const at::Tensor& latent, const ChannelStats& reference, std::int64_t fromFrame = 0);

// sqrt(mean((a − b)²)) of two same-shaped tensors, in float64.
double rmsDifference(const at::Tensor& a, const at::Tensor& b);

}  // namespace shotchain::continuity
