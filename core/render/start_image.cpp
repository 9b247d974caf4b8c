#include "render/start_image.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

#include "util/lanczos_resize.h"

namespace shotchain::render {

at::Tensor startImageTensor(const RgbFrame& image, int width, int height) {
  if (image.width <= 0 || image.height <= 0 || width <= 0 || height <= 0)
    throw std::invalid_argument("start image: empty image or frame size");
  const double scale = std::max(static_cast<double>(width) / image.width, static_cast<double>(height) / image.height);
  // Python's round() (halves to even), as i2v() sizes the resize.
  const auto side = [&](int s) { return std::max(1, static_cast<int>(std::nearbyint(s * scale))); };
  const util::Pixels8 resized =
      util::resizeLanczos({image.width, image.height, 3, image.rgb}, side(image.width), side(image.height));
  if (resized.width < width || resized.height < height)
    throw std::invalid_argument("start image: the resize to " + std::to_string(resized.width) + "x" +
                                std::to_string(resized.height) + " does not cover " + std::to_string(width) + "x" +
                                std::to_string(height));
  const int x0 = (resized.width - width) / 2, y0 = (resized.height - height) / 2;
  const at::Tensor all = at::from_blob(const_cast<std::uint8_t*>(resized.data.data()),
                                       {resized.height, resized.width, 3}, at::TensorOptions().dtype(at::kByte));
  const at::Tensor crop = all.narrow(0, y0, height).narrow(1, x0, width).permute({2, 0, 1});
  return crop.to(at::kFloat).div(255.0).sub(0.5).div(0.5).contiguous();
}

}  // namespace shotchain::render
