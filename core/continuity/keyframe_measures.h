#pragma once

#include <ATen/core/Tensor.h>

#include "continuity/keyframe_landing.h"

namespace shotchain::continuity {

// `frame` and `keyframe` [3, H, W] in [−1, 1] of one size: PSNR and SSIM of the luma, mean ΔE (frame_measures.h).
KeyframeLanding measureLanding(const char* end, const at::Tensor& frame, const at::Tensor& keyframe);

}  // namespace shotchain::continuity
