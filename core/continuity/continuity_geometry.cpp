#include "continuity/continuity_geometry.h"

#include <algorithm>

namespace shotchain::continuity {

int prefixFrames(const Continuity& continuity) { return std::max(1, continuity.prefixFrames.value_or(1)); }

ContinuityGeometry continuityGeometry(const Continuity& c) {
  ContinuityGeometry g;
  switch (c.mode) {
    case ContinuityMode::None:
      break;
    case ContinuityMode::Latent:
      g.heldLatents = g.handedTailLatents = prefixFrames(c);
      g.extraLatents = g.heldLatents - 1;
      g.decodePrefixLatents = 1;
      break;
    case ContinuityMode::LatentOverlap:
      g.handedTailLatents = g.extraLatents = std::max(1, c.overlapLatents);
      g.heldLatents = g.handedTailLatents + 1;
      break;
    case ContinuityMode::Blend:
    case ContinuityMode::VaeRoundtrip:
      g.heldLatents = g.handedTailLatents = 1;
      break;
  }
  return g;
}

}  // namespace shotchain::continuity
