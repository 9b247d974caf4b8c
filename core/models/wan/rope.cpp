#include "models/wan/rope.h"

#include <ATen/ATen.h>

namespace shotchain::models {
namespace {

// ω for one axis with `axisDims` channels, exactly as rope_params computes it.
at::Tensor axisOmega(std::int64_t axisDims) {
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  return 1.0 / at::pow(10000.0, at::arange(0, axisDims, 2, f64).div(static_cast<double>(axisDims)));
}

std::array<at::Tensor, 3> omegas(std::int64_t headDim) {
  const auto pairs = ropeAxisPairs(headDim);
  return {axisOmega(2 * pairs[0]), axisOmega(2 * pairs[1]), axisOmega(2 * pairs[2])};
}

}  // namespace

std::array<std::int64_t, 3> ropeAxisPairs(std::int64_t headDim) {
  const std::int64_t spatial = headDim / 6;
  return {headDim / 2 - 2 * spatial, spatial, spatial};
}

at::Tensor ropeTable(std::int64_t headDim, std::int64_t positions) {
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor position = at::arange(positions, f64);
  std::vector<at::Tensor> parts;
  for (const at::Tensor& omega : omegas(headDim)) parts.push_back(at::outer(position, omega));
  const at::Tensor angles = at::cat(parts, 1);
  return at::stack({at::cos(angles), at::sin(angles)}, -1);
}

at::Tensor ropeGridAngles(std::int64_t headDim, std::int64_t frames, std::int64_t height, std::int64_t width) {
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const auto w = omegas(headDim);
  const std::int64_t tokens = frames * height * width;
  const at::Tensor ft =
      at::outer(at::arange(frames, f64), w[0]).view({frames, 1, 1, -1}).expand({frames, height, width, -1});
  const at::Tensor ht =
      at::outer(at::arange(height, f64), w[1]).view({1, height, 1, -1}).expand({frames, height, width, -1});
  const at::Tensor wt =
      at::outer(at::arange(width, f64), w[2]).view({1, 1, width, -1}).expand({frames, height, width, -1});
  return at::cat({ft, ht, wt}, -1).reshape({tokens, headDim / 2});
}

at::Tensor ropeApply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const auto sizes = x.sizes();
  const at::Tensor pairs = x.to(at::kDouble).view({sizes[0], sizes[1], sizes[2], sizes[3] / 2, 2});
  const at::Tensor a = pairs.select(-1, 0), b = pairs.select(-1, 1);
  const at::Tensor c = cos.unsqueeze(2), s = sin.unsqueeze(2);  // broadcast over heads
  const at::Tensor real = a * c - b * s;
  const at::Tensor imag = a * s + b * c;
  return at::stack({real, imag}, -1).view(sizes).to(at::kFloat);
}

}  // namespace shotchain::models
