#pragma once

#include <array>
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// Complex pairs of a head given to the frame, height and width axes: for head_dim d,
// d/2 − 2·⌊d/6⌋ pairs for frames and ⌊d/6⌋ each for height and width (22/21/21 at d = 128).
std::array<std::int64_t, 3> ropeAxisPairs(std::int64_t headDim);

// The reference's table `freqs` for positions 0…positions−1: [positions, d/2, 2] float64 holding
// (cos, sin) of position · ω, with each axis' ω_j = 1 / 10000^(2j / axis_dims).
at::Tensor ropeTable(std::int64_t headDim, std::int64_t positions);

// Angles for a (frames, height, width) token grid, token index (fi·h + hi)·w + wi:
// [f·h·w, d/2] float64.
at::Tensor ropeGridAngles(std::int64_t headDim, std::int64_t frames, std::int64_t height, std::int64_t width);

// Rotates interleaved pairs (2j, 2j+1) of every head: x [B, L, H, d]; cos/sin [B, L, d/2] (float64,
// identity rows for padding). Computed in float64 like the reference; returns float32.
at::Tensor ropeApply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace shotchain::models
