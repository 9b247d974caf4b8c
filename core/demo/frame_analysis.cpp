#include "demo/frame_analysis.h"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

namespace shotchain::demo {
namespace {

// The upper of the two middle values (the eval's published figures were measured with it).
float upperMedian(std::vector<float> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

int countBlobs(const std::vector<char>& mask, int w, int h) {
  std::vector<char> seen(mask.size(), 0);
  std::vector<int> stack;
  int blobs = 0;
  for (int start = 0; start < w * h; ++start) {
    if (!mask[static_cast<std::size_t>(start)] || seen[static_cast<std::size_t>(start)]) continue;
    int size = 0;
    stack.assign(1, start);
    seen[static_cast<std::size_t>(start)] = 1;
    while (!stack.empty()) {
      const int p = stack.back();
      stack.pop_back();
      ++size;
      const int x = p % w, y = p / w;
      const int next[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
      for (const auto& n : next) {
        if (n[0] < 0 || n[1] < 0 || n[0] >= w || n[1] >= h) continue;
        const auto q = static_cast<std::size_t>(n[1] * w + n[0]);
        if (mask[q] && !seen[q]) {
          seen[q] = 1;
          stack.push_back(static_cast<int>(q));
        }
      }
    }
    if (size >= kMinBlobPixels) ++blobs;
  }
  return blobs;
}

}  // namespace

float hueDegrees(const std::array<float, 3>& c) {
  const float mx = std::max({c[0], c[1], c[2]}), mn = std::min({c[0], c[1], c[2]});
  const float d = mx - mn;
  if (d < 1e-6f) return 0;
  float h = 0;
  if (mx == c[0])
    h = std::fmod((c[1] - c[2]) / d + 6.0f, 6.0f);
  else if (mx == c[1])
    h = (c[2] - c[0]) / d + 2.0f;
  else
    h = (c[0] - c[1]) / d + 4.0f;
  return 60.0f * h;
}

int nearestColour(const std::array<float, 3>& rgb) {
  int best = -1;
  float bestDistance = 1e9f;
  for (std::size_t i = 0; i < demoColours().size(); ++i) {
    const auto& c = demoColours()[i].rgb;
    const float d =
        (c[0] - rgb[0]) * (c[0] - rgb[0]) + (c[1] - rgb[1]) * (c[1] - rgb[1]) + (c[2] - rgb[2]) * (c[2] - rgb[2]);
    if (d < bestDistance) {
      bestDistance = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

Shape shapeFromOutline(float fill, float aspect) {
  if (aspect >= kBarAspect) return Shape::Bar;
  if (fill < kTriangleFill) return Shape::Triangle;
  return Shape::Circle;
}

FrameObservation analyseFrame(const at::Tensor& frameIn, float threshold) {
  const at::Tensor frame = ((frameIn.detach().to(at::kCPU, at::kFloat) + 1) * 0.5).clamp(0, 1).contiguous();
  const int h = static_cast<int>(frame.size(1)), w = static_cast<int>(frame.size(2));
  const float* data = frame.data_ptr<float>();
  const std::size_t plane = static_cast<std::size_t>(h) * static_cast<std::size_t>(w);
  auto px = [&](int c, int x, int y) {
    return data[static_cast<std::size_t>(c) * plane + static_cast<std::size_t>(y * w + x)];
  };
  FrameObservation o;
  for (int c = 0; c < 3; ++c) {
    std::vector<float> ring;
    for (int x = 0; x < w; ++x) {
      ring.push_back(px(c, x, 0));
      ring.push_back(px(c, x, h - 1));
    }
    for (int y = 1; y < h - 1; ++y) {
      ring.push_back(px(c, 0, y));
      ring.push_back(px(c, w - 1, y));
    }
    o.background[static_cast<std::size_t>(c)] = upperMedian(ring);
  }
  std::vector<float> diff(plane);
  std::vector<char> mask(plane, 0);
  float maxDiff = 0;
  double sx = 0, sy = 0;
  o.minX = w;
  o.minY = h;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float d = 0;
      for (int c = 0; c < 3; ++c) d = std::max(d, std::fabs(px(c, x, y) - o.background[static_cast<std::size_t>(c)]));
      const auto i = static_cast<std::size_t>(y * w + x);
      diff[i] = d;
      if (d <= threshold) continue;
      mask[i] = 1;
      maxDiff = std::max(maxDiff, d);
      ++o.pixels;
      sx += x + 0.5;
      sy += y + 0.5;
      o.minX = std::min(o.minX, x);
      o.maxX = std::max(o.maxX, x);
      o.minY = std::min(o.minY, y);
      o.maxY = std::max(o.maxY, y);
    }
  // An object of the demo world covers a few percent of the frame; most of it differing is noise or a wash.
  if (o.pixels < kMinObjectPixels || o.pixels > static_cast<int>(kMaxObjectFraction * static_cast<float>(plane)))
    return o;
  o.found = true;
  o.cx = static_cast<float>(sx / o.pixels);
  o.cy = static_cast<float>(sy / o.pixels);
  o.fill = static_cast<float>(o.pixels) / static_cast<float>((o.maxX - o.minX + 1) * (o.maxY - o.minY + 1));
  o.aspect = static_cast<float>(o.maxX - o.minX + 1) / static_cast<float>(o.maxY - o.minY + 1);
  o.touchesBorder = o.minX == 0 || o.minY == 0 || o.maxX == w - 1 || o.maxY == h - 1;
  o.components = countBlobs(mask, w, h);
  std::array<double, 3> sum{};
  int core = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (diff[static_cast<std::size_t>(y * w + x)] < 0.6f * maxDiff) continue;
      for (int c = 0; c < 3; ++c) sum[static_cast<std::size_t>(c)] += px(c, x, y);
      ++core;
    }
  for (std::size_t c = 0; c < 3; ++c) o.meanRgb[c] = static_cast<float>(sum[c] / std::max(core, 1));
  o.hue = hueDegrees(o.meanRgb);
  return o;
}

ClipObservation analyseClip(const at::Tensor& video, float stillBelow) {
  ClipObservation clip;
  const std::int64_t frames = video.size(1);
  std::array<double, 3> rgb{};
  std::vector<float> fills, aspects, steps;
  std::vector<double> ts, xs, ys;
  const FrameObservation* previous = nullptr;
  clip.frames.reserve(static_cast<std::size_t>(frames));
  for (std::int64_t t = 0; t < frames; ++t) {
    clip.frames.push_back(analyseFrame(video.select(1, t)));
    const FrameObservation& o = clip.frames.back();
    if (!o.found) {
      previous = nullptr;
      continue;
    }
    ++clip.foundFrames;
    if (o.components == 1) ++clip.singleObjectFrames;
    for (std::size_t c = 0; c < 3; ++c) rgb[c] += o.meanRgb[c];
    if (!o.touchesBorder) {
      fills.push_back(o.fill);
      aspects.push_back(o.aspect);
    }
    ts.push_back(static_cast<double>(t));
    xs.push_back(o.cx);
    ys.push_back(o.cy);
    if (previous) steps.push_back(std::hypot(o.cx - previous->cx, o.cy - previous->cy));
    previous = &o;
  }
  if (clip.foundFrames == 0) return clip;
  std::array<float, 3> mean{};
  for (std::size_t c = 0; c < 3; ++c) mean[c] = static_cast<float>(rgb[c] / clip.foundFrames);
  clip.colour = nearestColour(mean);
  clip.hue = hueDegrees(mean);
  clip.fill = fills.empty() ? 0 : upperMedian(fills);
  clip.aspect = aspects.empty() ? 0 : upperMedian(aspects);
  clip.shape = shapeFromOutline(clip.fill, clip.aspect);
  clip.medianStep = upperMedian(steps);
  if (ts.size() >= 2) {
    const double n = static_cast<double>(ts.size());
    double mt = 0, mx = 0, my = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      mt += ts[i] / n;
      mx += xs[i] / n;
      my += ys[i] / n;
    }
    double stt = 0, stx = 0, sty = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      stt += (ts[i] - mt) * (ts[i] - mt);
      stx += (ts[i] - mt) * (xs[i] - mx);
      sty += (ts[i] - mt) * (ys[i] - my);
    }
    const double span = static_cast<double>(frames - 1);
    clip.dx = stt > 0 ? static_cast<float>(stx / stt * span) : 0;
    clip.dy = stt > 0 ? static_cast<float>(sty / stt * span) : 0;
  }
  if (std::hypot(clip.dx, clip.dy) < stillBelow)
    clip.direction = Direction::Still;
  else if (std::fabs(clip.dx) >= std::fabs(clip.dy))
    clip.direction = clip.dx > 0 ? Direction::Right : Direction::Left;
  else
    clip.direction = clip.dy > 0 ? Direction::Down : Direction::Up;
  return clip;
}

}  // namespace shotchain::demo
