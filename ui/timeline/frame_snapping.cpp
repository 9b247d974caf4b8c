#include "timeline/frame_snapping.h"

#include <algorithm>
#include <cmath>

#include "resolve/frame_rules.h"

namespace shotchain::ui {

int trimmedLength(int originalFrames, double deltaFrames, bool bypass, int maxFrames,
                  const resolve::FrameGeometry& geometry) {
  const int raw = std::clamp(static_cast<int>(std::lround(originalFrames + deltaFrames)), 1, maxFrames);
  return bypass ? raw : std::min(resolve::nearestFrameCount(raw, geometry), maxFrames);
}

}  // namespace shotchain::ui
