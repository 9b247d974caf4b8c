#include "util/lanczos_resize.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace shotchain::util {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr double kSupport = 3.0;

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= std::numbers::pi;
  return std::sin(x) / x;
}

double lanczos(double x) { return x > -kSupport && x < kSupport ? sinc(x) * sinc(x / kSupport) : 0.0; }

// For each output index along one axis: the first input index and the fixed-point weights.
struct Taps {
  std::vector<int> first, count;
  std::vector<int> weights;  // out × stride
  int stride = 0;
};

Taps tapsFor(int inSize, int outSize) {
  const double scale = static_cast<double>(inSize) / outSize;
  const double filterScale = std::max(scale, 1.0);
  const double support = kSupport * filterScale;
  Taps taps;
  taps.stride = static_cast<int>(std::ceil(support)) * 2 + 1;
  taps.first.resize(static_cast<std::size_t>(outSize));
  taps.count.resize(static_cast<std::size_t>(outSize));
  taps.weights.assign(static_cast<std::size_t>(outSize) * static_cast<std::size_t>(taps.stride), 0);
  std::vector<double> k(static_cast<std::size_t>(taps.stride));
  for (int xx = 0; xx < outSize; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterScale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), inSize) - xmin;
    double total = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = lanczos((x + xmin - center + 0.5) * ss);
      k[static_cast<std::size_t>(x)] = w;
      total += w;
    }
    for (int x = 0; x < xmax; ++x) {
      const double w = total != 0.0 ? k[static_cast<std::size_t>(x)] / total : k[static_cast<std::size_t>(x)];
      const double fixed = w * (1 << kPrecisionBits);
      taps.weights[static_cast<std::size_t>(xx) * static_cast<std::size_t>(taps.stride) + static_cast<std::size_t>(x)] =
          static_cast<int>(w < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    taps.first[static_cast<std::size_t>(xx)] = xmin;
    taps.count[static_cast<std::size_t>(xx)] = xmax;
  }
  return taps;
}

std::uint8_t clip8(long long accumulated) {
  return static_cast<std::uint8_t>(std::clamp<long long>(accumulated >> kPrecisionBits, 0, 255));
}

// One pass along x (horizontal) or y.
Pixels8 pass(const Pixels8& in, int outSize, bool horizontal) {
  const int inSize = horizontal ? in.width : in.height;
  const Taps taps = tapsFor(inSize, outSize);
  Pixels8 out;
  out.channels = in.channels;
  out.width = horizontal ? outSize : in.width;
  out.height = horizontal ? in.height : outSize;
  out.data.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) *
                  static_cast<std::size_t>(out.channels));
  const std::size_t c = static_cast<std::size_t>(in.channels);
  auto at = [&](int x, int y) {
    return (static_cast<std::size_t>(y) * static_cast<std::size_t>(in.width) + static_cast<std::size_t>(x)) * c;
  };
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      const int o = horizontal ? x : y;
      const int* k = &taps.weights[static_cast<std::size_t>(o) * static_cast<std::size_t>(taps.stride)];
      const int first = taps.first[static_cast<std::size_t>(o)], count = taps.count[static_cast<std::size_t>(o)];
      for (std::size_t ch = 0; ch < c; ++ch) {
        long long sum = 1LL << (kPrecisionBits - 1);
        for (int i = 0; i < count; ++i) {
          const std::size_t src = horizontal ? at(first + i, y) : at(x, first + i);
          sum += static_cast<long long>(in.data[src + ch]) * k[i];
        }
        out.data[(static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width) + static_cast<std::size_t>(x)) * c +
                 ch] = clip8(sum);
      }
    }
  }
  return out;
}

}  // namespace

Pixels8 resizeLanczos(const Pixels8& in, int width, int height) {
  if (width <= 0 || height <= 0 || in.width <= 0 || in.height <= 0 || in.channels <= 0 ||
      in.data.size() != static_cast<std::size_t>(in.width) * static_cast<std::size_t>(in.height) *
                            static_cast<std::size_t>(in.channels))
    throw std::invalid_argument("resizeLanczos: empty or inconsistent image");
  Pixels8 out = in;
  if (width != in.width) out = pass(out, width, true);
  if (height != in.height) out = pass(out, height, false);
  return out;
}

}  // namespace shotchain::util
