#pragma once

namespace shotchain::ui {

// Wan renders 4k+1 frames: the nearest such length, never below 1.
int snapToValidLength(int frames);
// Snapped unless `bypass` (Alt held), clamped to 1..maxFrames.
int trimmedLength(int originalFrames, double deltaFrames, bool bypass, int maxFrames);

}  // namespace shotchain::ui
