#include "render/frame_conversion.h"

#include <cstring>
#include <stdexcept>

#include <ATen/ATen.h>

namespace shotchain::render {

RgbFrame rgb8ToFrame(const at::Tensor& rgb) {
  if (rgb.dim() != 3 || rgb.size(2) != 3 || rgb.scalar_type() != at::kByte)
    throw std::invalid_argument("rgb8ToFrame: expected uint8 [H, W, 3]");
  const at::Tensor contiguous = rgb.to(at::kCPU).contiguous();
  RgbFrame frame;
  frame.height = static_cast<int>(contiguous.size(0));
  frame.width = static_cast<int>(contiguous.size(1));
  frame.rgb.resize(static_cast<std::size_t>(contiguous.numel()));
  std::memcpy(frame.rgb.data(), contiguous.data_ptr<std::uint8_t>(), frame.rgb.size());
  return frame;
}

at::Tensor frameToTensor(const RgbFrame& frame) {
  if (frame.width <= 0 || frame.height <= 0 ||
      frame.rgb.size() != static_cast<std::size_t>(frame.width) * frame.height * 3)
    throw std::invalid_argument("frameToTensor: the frame's pixels do not match its size");
  const at::Tensor bytes = at::empty({frame.height, frame.width, 3}, at::kByte);
  std::memcpy(bytes.data_ptr<std::uint8_t>(), frame.rgb.data(), frame.rgb.size());
  return bytes.permute({2, 0, 1}).to(at::kFloat).div_(127.5).sub_(1.0).contiguous();
}

std::vector<RgbFrame> videoToFrames(const at::Tensor& video) {
  if (video.dim() != 4 || video.size(0) != 3) throw std::invalid_argument("videoToFrames: expected [3, T, H, W]");
  const at::Tensor bytes = video.detach()
                               .to(at::kCPU, at::kFloat)
                               .add(1.0)
                               .div_(2.0)
                               .clamp_(0.0, 1.0)
                               .mul_(255.0)
                               .round_()
                               .to(at::kByte)
                               .permute({1, 2, 3, 0});
  std::vector<RgbFrame> frames;
  frames.reserve(static_cast<std::size_t>(bytes.size(0)));
  for (std::int64_t t = 0; t < bytes.size(0); ++t) frames.push_back(rgb8ToFrame(bytes[t]));
  return frames;
}

}  // namespace shotchain::render
