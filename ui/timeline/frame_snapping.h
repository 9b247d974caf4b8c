#pragma once

#include "resolve/resolved_shot.h"

namespace shotchain::ui {

// A trimmed length: snapped to the nearest one the model set takes (resolve::nearestFrameCount) unless
// `bypass` (Alt held), clamped to 1..maxFrames.
int trimmedLength(int originalFrames, double deltaFrames, bool bypass, int maxFrames,
                  const resolve::FrameGeometry& geometry);

}  // namespace shotchain::ui
