#include "resolve/frame_rules.h"

#include <algorithm>
#include <cmath>

#include "sequence/validation.h"

namespace shotchain::resolve {

FrameGeometry geometryOf(const models::ModelSetFacts& models) {
  FrameGeometry g;
  g.temporalFactor = static_cast<int>(models.vae.temporalFactor);
  g.spatialFactor = static_cast<int>(models.vae.spatialFactor);
  g.patchFrames = static_cast<int>(models.dit.patchFrames);
  g.patchSide = static_cast<int>(models.dit.patchSide);
  g.family = models.dit.familyName;
  return g;
}

std::string frameCountProblem(int frames, const FrameGeometry& g) {
  const int step = g.frameStep();
  if (frames < 1) return std::to_string(frames) + " frames: a shot needs at least 1 frame";
  if (frames > limits::kMaxFrames)
    return std::to_string(frames) + " frames is more than the limit of " + std::to_string(limits::kMaxFrames);
  if ((frames - 1) % step == 0) return {};
  const int lower = (frames - 1) / step * step + 1;
  return std::to_string(frames) + " is not " + std::to_string(step) + "k+1 (try " + std::to_string(lower) + " or " +
         std::to_string(lower + step) + ")";
}

std::string sideProblem(int pixels, const FrameGeometry& g) {
  const int multiple = g.sideMultiple();
  if (pixels % multiple == 0 && pixels >= multiple) return {};
  const int lower = std::max(multiple, pixels / multiple * multiple);
  const int upper = pixels < multiple ? 2 * multiple : lower + multiple;
  return std::to_string(pixels) + " is not a multiple of " + std::to_string(multiple) + " for " + g.family +
         " (VAE stride " + std::to_string(g.spatialFactor) + " × patch " + std::to_string(g.patchSide) + "); try " +
         std::to_string(lower) + " or " + std::to_string(upper);
}

Diagnostics shotGeometryProblems(const Shot& shot, std::size_t index, const FrameGeometry& geometry) {
  Diagnostics out;
  // Out of range is the document's own rule (sequence/validation.h), said there once.
  const bool inRange = shot.frames >= 1 && shot.frames <= limits::kMaxFrames;
  if (const std::string problem = inRange ? frameCountProblem(shot.frames, geometry) : std::string(); !problem.empty())
    out.push_back({Diagnostic::Severity::Error, shotPath(index, "frames"), problem});
  for (const auto& [field, pixels] : {std::pair{"width", shot.width}, std::pair{"height", shot.height}})
    if (pixels >= limits::kMinSide && pixels <= limits::kMaxSide)
      if (const std::string problem = sideProblem(pixels, geometry); !problem.empty())
        out.push_back({Diagnostic::Severity::Error, shotPath(index, field), problem});
  return out;
}

int nearestFrameCount(int frames, const FrameGeometry& g) {
  const int step = g.frameStep();
  const int k = static_cast<int>(std::lround((std::max(frames, 1) - 1) / static_cast<double>(step)));
  return std::min(step * k + 1, (limits::kMaxFrames - 1) / step * step + 1);
}

}  // namespace shotchain::resolve
