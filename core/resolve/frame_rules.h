#pragma once

// The frame counts and picture sizes a model set takes (FrameGeometry: its VAE's factors and its DiT's
// patch), with the messages that say what to type instead. The one place these rules are written.
#include <string>

#include "resolve/resolved_shot.h"

namespace shotchain::resolve {

FrameGeometry geometryOf(const models::ModelSetFacts& models);

// Why `frames` is not a length the geometry takes ("18 is not 4k+1 (try 17 or 21)"), or "" when it is.
std::string frameCountProblem(int frames, const FrameGeometry& geometry);
// Why `pixels` is not a side the geometry takes ("720 is not a multiple of 32 for Wan 2.2 TI2V (VAE stride 16 ×
// patch 2); try 704 or 736"), or "" when it is.
std::string sideProblem(int pixels, const FrameGeometry& geometry);
// The frame count and sides of shot `index` against the geometry, as errors at their document paths.
Diagnostics shotGeometryProblems(const Shot& shot, std::size_t index, const FrameGeometry& geometry);
// The length the geometry takes nearest to `frames`, at least one latent frame.
int nearestFrameCount(int frames, const FrameGeometry& geometry);

}  // namespace shotchain::resolve
