#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "render/render_events.h"

namespace shotchain::render {

// video [3, T, H, W] (float, about −1…1, any device) → T frames of 8-bit RGB:
// round(clamp((x + 1)/2, 0, 1)·255), the reference's conversion for saving video.
std::vector<RgbFrame> videoToFrames(const at::Tensor& video);
// rgb [H, W, 3] uint8 on the CPU → one frame.
RgbFrame rgb8ToFrame(const at::Tensor& rgb);
// One frame → [3, H, W] float32 in −1…1 on the CPU (x/127.5 − 1).
at::Tensor frameToTensor(const RgbFrame& frame);

}  // namespace shotchain::render
