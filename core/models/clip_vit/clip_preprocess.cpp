#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>

#include "models/clip_vit/clip_vision.h"

namespace shotchain::models {
namespace {

at::Tensor normalised(const at::Tensor& unit) {
  const auto options = at::TensorOptions().dtype(at::kFloat).device(unit.device());
  const at::Tensor mean = at::tensor({0.48145466f, 0.4578275f, 0.40821073f}, options).view({1, 3, 1, 1});
  const at::Tensor std = at::tensor({0.26862954f, 0.26130258f, 0.27577711f}, options).view({1, 3, 1, 1});
  return (unit - mean) / std;
}

// Python's round(): halves to even.
std::int64_t roundHalfEven(double value) { return static_cast<std::int64_t>(std::nearbyint(value)); }

}  // namespace

at::Tensor clipPreprocess(const at::Tensor& images, std::int64_t size, ClipPreprocessing mode) {
  if (images.dim() != 4 || images.size(1) != 3 || size <= 0)
    throw std::invalid_argument("clipPreprocess: images must be [B, 3, H, W]");
  const at::Tensor x = images.to(at::kFloat);
  if (mode == ClipPreprocessing::Official) {
    const at::Tensor squashed = at::upsample_bicubic2d(x, {size, size}, /*align_corners=*/false);
    return normalised(squashed * 0.5 + 0.5);
  }
  at::Tensor unit = x * 0.5 + 0.5;
  const std::int64_t h = unit.size(2), w = unit.size(3);
  if (h != size || w != size) {
    const double scale = static_cast<double>(size) / static_cast<double>(std::min(h, w));
    unit = at::_upsample_bicubic2d_aa(
        unit, {roundHalfEven(scale * static_cast<double>(h)), roundHalfEven(scale * static_cast<double>(w))},
        /*align_corners=*/false);
    const std::int64_t top = (unit.size(2) - size) / 2, left = (unit.size(3) - size) / 2;
    unit = unit.narrow(2, top, size).narrow(3, left, size);
  }
  return normalised(at::round(at::clamp(unit * 255.0, 0.0, 255.0)) / 255.0);
}

}  // namespace shotchain::models
