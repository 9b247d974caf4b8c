#pragma once

#include <ATen/core/Tensor.h>

#include "render/render_events.h"

namespace shotchain::render {

// A shot's start image as Wan 2.2's i2v() prepares it for a frame of width × height: resized with
// Pillow's Lanczos so that it covers the frame (scale = max(W/w, H/h), sides rounded), centre-cropped
// (offsets rounded down), then [3, H, W] float32 = (u8/255 − 0.5)/0.5 on the CPU.
at::Tensor startImageTensor(const RgbFrame& image, int width, int height);

}  // namespace shotchain::render
