#include "continuity/frame_measures.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

namespace shotchain::continuity {

namespace {

at::Tensor unitRgb(const at::Tensor& rgb, const char* what) {
  if (!rgb.defined() || rgb.dim() < 3 || rgb.size(0) != 3)
    throw std::invalid_argument(std::string(what) + ": expected RGB frames [3, ..., H, W]");
  return (rgb.to(at::kDouble) + 1.0) * 0.5;
}

void checkPair(const at::Tensor& a, const at::Tensor& b, const char* what) {
  if (!a.defined() || !b.defined() || a.sizes() != b.sizes() || a.dim() != 3 || a.size(0) != 3)
    throw std::invalid_argument(std::string(what) + ": expected two frames [3, H, W] of the same size");
}

// Separable 'valid' Gaussian filtering of [H, W] maps.
at::Tensor gaussianFilter(const at::Tensor& image, const at::Tensor& kernel) {
  const std::int64_t n = kernel.size(0);
  at::Tensor x = image.unsqueeze(0).unsqueeze(0);
  x = at::conv2d(x, kernel.view({1, 1, n, 1}));
  x = at::conv2d(x, kernel.view({1, 1, 1, n}));
  return x.squeeze(0).squeeze(0);
}

}  // namespace

at::Tensor lumaOf(const at::Tensor& rgb) {
  const at::Tensor u = unitRgb(rgb, "lumaOf");
  return 0.299 * u[0] + 0.587 * u[1] + 0.114 * u[2];
}

double madLuma(const at::Tensor& a, const at::Tensor& b) {
  checkPair(a, b, "madLuma");
  return (lumaOf(a) - lumaOf(b)).abs().mean().item<double>();
}

double psnrLuma(const at::Tensor& a, const at::Tensor& b) {
  checkPair(a, b, "psnrLuma");
  const double mse = (lumaOf(a) - lumaOf(b)).pow(2).mean().item<double>();
  if (mse == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(1.0 / mse);
}

double ssimLuma(const at::Tensor& a, const at::Tensor& b) {
  checkPair(a, b, "ssimLuma");
  std::int64_t size = std::min<std::int64_t>({11, a.size(1), a.size(2)});
  if (size % 2 == 0) --size;
  const double sigma = 1.5;
  std::vector<double> weights(static_cast<std::size_t>(size));
  double sum = 0;
  for (std::int64_t i = 0; i < size; ++i) {
    const double d = static_cast<double>(i - size / 2);
    weights[static_cast<std::size_t>(i)] = std::exp(-d * d / (2 * sigma * sigma));
    sum += weights[static_cast<std::size_t>(i)];
  }
  for (double& w : weights) w /= sum;
  const at::Tensor kernel = at::tensor(weights, at::TensorOptions().dtype(at::kDouble)).to(a.device());

  const at::Tensor x = lumaOf(a), y = lumaOf(b);
  constexpr double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
  const at::Tensor mx = gaussianFilter(x, kernel), my = gaussianFilter(y, kernel);
  const at::Tensor sxx = gaussianFilter(x * x, kernel) - mx * mx;
  const at::Tensor syy = gaussianFilter(y * y, kernel) - my * my;
  const at::Tensor sxy = gaussianFilter(x * y, kernel) - mx * my;
  const at::Tensor map = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2));
  return map.mean().item<double>();
}

double meanRgbChange(const at::Tensor& a, const at::Tensor& b) {
  checkPair(a, b, "meanRgbChange");
  return (unitRgb(a, "meanRgbChange") - unitRgb(b, "meanRgbChange")).abs().mean().item<double>();
}

FramePairMeasures measureFramePair(const at::Tensor& a, const at::Tensor& b) {
  return {madLuma(a, b), psnrLuma(a, b), ssimLuma(a, b)};
}

namespace {

// Per-pixel L*, a*, b* of a frame [3, H, W] read as sRGB: [3, H, W] float64.
at::Tensor labPixels(const at::Tensor& rgb, const char* what) {
  if (!rgb.defined() || rgb.dim() != 3 || rgb.size(0) != 3)
    throw std::invalid_argument(std::string(what) + ": expected a frame [3, H, W]");
  const at::Tensor u = unitRgb(rgb, what).clamp(0.0, 1.0);
  const at::Tensor linear = at::where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055).pow(2.4));
  const at::Tensor r = linear[0], g = linear[1], bl = linear[2];
  // sRGB (D65) → XYZ, normalised by the D65 white point.
  const at::Tensor x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * bl) / 0.95047;
  const at::Tensor y = (0.2126729 * r + 0.7151522 * g + 0.0721750 * bl) / 1.0;
  const at::Tensor z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * bl) / 1.08883;
  constexpr double epsilon = 216.0 / 24389.0, kappa = 24389.0 / 27.0;
  const auto f = [&](const at::Tensor& t) {
    return at::where(t > epsilon, t.pow(1.0 / 3.0), (kappa * t + 16.0) / 116.0);
  };
  const at::Tensor fx = f(x), fy = f(y), fz = f(z);
  return at::stack({116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)});
}

LabColour labOf(const at::Tensor& values) {
  return {values[0].item<double>(), values[1].item<double>(), values[2].item<double>()};
}

}  // namespace

LabColour meanLab(const at::Tensor& rgb) { return labOf(labPixels(rgb, "meanLab").flatten(1).mean(1)); }

LabStats labStats(const at::Tensor& rgb) {
  const at::Tensor lab = labPixels(rgb, "labStats").flatten(1);
  const at::Tensor mean = lab.mean(1);
  return {labOf(mean), labOf((lab - mean.unsqueeze(1)).pow(2).mean(1).sqrt())};
}

double meanDeltaE76(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) throw std::invalid_argument("meanDeltaE76: the frames differ in size");
  return (labPixels(a, "meanDeltaE76") - labPixels(b, "meanDeltaE76")).pow(2).sum(0).sqrt().mean().item<double>();
}

double deltaE76(const LabColour& x, const LabColour& y) {
  return std::sqrt((x.l - y.l) * (x.l - y.l) + (x.a - y.a) * (x.a - y.a) + (x.b - y.b) * (x.b - y.b));
}

}  // namespace shotchain::continuity
