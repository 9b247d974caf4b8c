#include "timeline/frame_snapping.h"

#include <algorithm>
#include <cmath>

#include "sequence/validation.h"

namespace shotchain::ui {

int snapToValidLength(int frames) {
  const int k = static_cast<int>(std::lround((std::max(frames, 1) - 1) / 4.0));
  return std::min(4 * k + 1, limits::kMaxFrames);
}

int trimmedLength(int originalFrames, double deltaFrames, bool bypass, int maxFrames) {
  const int raw = std::clamp(static_cast<int>(std::lround(originalFrames + deltaFrames)), 1, maxFrames);
  return bypass ? raw : std::min(snapToValidLength(raw), maxFrames);
}

}  // namespace shotchain::ui
