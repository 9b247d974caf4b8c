#include "demo/procedural_clip.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <ATen/ATen.h>

namespace shotchain::demo {
namespace {

constexpr int kSuper = 4;  // supersampling per axis

bool inside(Shape shape, float dx, float dy, float r) {
  switch (shape) {
    case Shape::Circle:
      return dx * dx + dy * dy <= r * r;
    case Shape::Bar:
      return std::fabs(dx) <= r && std::fabs(dy) <= r / 3;
    case Shape::Triangle: {
      // Upward-pointing isosceles triangle filling the box [−r, r]²: apex (0, −r), base y = r.
      if (dy > r || dy < -r) return false;
      const float halfWidth = r * (dy + r) / (2 * r);
      return std::fabs(dx) <= halfWidth;
    }
  }
  return false;
}

}  // namespace

const std::vector<NamedColour>& demoColours() {
  static const std::vector<NamedColour> colours = {
      {"red", {0.92f, 0.12f, 0.10f}},    {"green", {0.10f, 0.80f, 0.20f}}, {"blue", {0.15f, 0.30f, 0.98f}},
      {"yellow", {0.95f, 0.88f, 0.10f}}, {"white", {0.95f, 0.95f, 0.95f}}, {"magenta", {0.90f, 0.15f, 0.88f}},
  };
  return colours;
}

const std::vector<NamedColour>& demoBackgrounds() {
  static const std::vector<NamedColour> backgrounds = {{"black", {0.0f, 0.0f, 0.0f}}, {"gray", {0.42f, 0.42f, 0.42f}}};
  return backgrounds;
}

const char* shapeName(Shape shape) {
  switch (shape) {
    case Shape::Circle:
      return "circle";
    case Shape::Bar:
      return "bar";
    case Shape::Triangle:
      return "triangle";
  }
  return "?";
}

const char* directionName(Direction direction) {
  switch (direction) {
    case Direction::Still:
      return "still";
    case Direction::Left:
      return "left";
    case Direction::Right:
      return "right";
    case Direction::Up:
      return "up";
    case Direction::Down:
      return "down";
  }
  return "?";
}

std::array<float, 2> directionStep(Direction direction) {
  switch (direction) {
    case Direction::Still:
      return {0, 0};
    case Direction::Left:
      return {-1, 0};
    case Direction::Right:
      return {1, 0};
    case Direction::Up:
      return {0, -1};
    case Direction::Down:
      return {0, 1};
  }
  return {0, 0};
}

ClipParams randomClipParams(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + 0x51ED2701ULL);
  auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
  auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  ClipParams p;
  p.colour = pick(static_cast<int>(demoColours().size()));
  p.background = pick(static_cast<int>(demoBackgrounds().size()));
  p.shape = static_cast<Shape>(pick(kShapeCount));
  p.direction = static_cast<Direction>(pick(kDirectionCount));
  p.radius = uniform(7.0f, 10.0f);
  p.speed = p.direction == Direction::Still ? 0.0f : uniform(1.0f, 2.0f);
  const float travel = p.speed * static_cast<float>(p.frames - 1);
  const auto [sx, sy] = directionStep(p.direction);
  // Along the motion: start so that the path stays in frame (it may touch the edge); across: anywhere.
  auto along = [&](float step, float extent) {
    const float lo = p.radius, hi = extent - p.radius;
    if (step > 0) return uniform(lo, std::max(lo + 1, hi - travel));
    if (step < 0) return uniform(std::min(hi - 1, lo + travel), hi);
    return uniform(lo, hi);
  };
  p.x0 = along(sx, static_cast<float>(p.width));
  p.y0 = along(sy, static_cast<float>(p.height));
  return p;
}

ClipParams continuationClipParams(const ClipParams& first, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0xD1B54A32D192ED03ULL + 0x2545F491ULL);
  auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
  ClipParams p = first;
  const auto [x, y] = clipCentre(first, first.frames - 1);
  p.x0 = x;
  p.y0 = y;
  // The object may touch the edge at the end, as in randomClipParams.
  auto fits = [&](Direction d, float speed) {
    const auto [sx, sy] = directionStep(d);
    const float travel = speed * static_cast<float>(p.frames - 1);
    const float ex = p.x0 + sx * travel, ey = p.y0 + sy * travel;
    return ex >= p.radius - 0.5f && ex <= static_cast<float>(p.width) - p.radius + 0.5f && ey >= p.radius - 0.5f &&
           ey <= static_cast<float>(p.height) - p.radius + 0.5f;
  };
  std::vector<Direction> options;
  for (float speed : {uniform(1.0f, 2.0f), 1.0f}) {
    p.speed = speed;
    for (Direction d : {Direction::Left, Direction::Right, Direction::Up, Direction::Down})
      if (d != first.direction && fits(d, speed)) options.push_back(d);
    if (!options.empty()) break;
  }
  if (options.empty()) {
    p.direction = Direction::Still;
    p.speed = 0;
    return p;
  }
  // One in five continuations stays still (a still object is a continuation too).
  if (std::uniform_int_distribution<int>(0, 4)(rng) == 0 && first.direction != Direction::Still) {
    p.direction = Direction::Still;
    p.speed = 0;
    return p;
  }
  p.direction = options[static_cast<std::size_t>(
      std::uniform_int_distribution<int>(0, static_cast<int>(options.size()) - 1)(rng))];
  return p;
}

std::string clipPrompt(int colour, Shape shape, Direction direction, int background) {
  const std::string motion =
      direction == Direction::Still ? "staying still" : std::string("moving ") + directionName(direction);
  return std::string("a ") + demoColours().at(static_cast<std::size_t>(colour)).name + " " + shapeName(shape) + " " +
         motion + " on a " + demoBackgrounds().at(static_cast<std::size_t>(background)).name + " background";
}

std::string clipPrompt(const ClipParams& p) { return clipPrompt(p.colour, p.shape, p.direction, p.background); }

std::array<float, 2> clipCentre(const ClipParams& p, int frame) {
  const auto [sx, sy] = directionStep(p.direction);
  const float d = p.speed * static_cast<float>(frame);
  return {p.x0 + sx * d, p.y0 + sy * d};
}

at::Tensor renderClip(const ClipParams& p) {
  const auto& fg = demoColours().at(static_cast<std::size_t>(p.colour)).rgb;
  const auto& bg = demoBackgrounds().at(static_cast<std::size_t>(p.background)).rgb;
  const std::size_t plane = static_cast<std::size_t>(p.width) * static_cast<std::size_t>(p.height);
  const std::size_t frames = static_cast<std::size_t>(p.frames);
  std::vector<float> data(3 * frames * plane);
  for (int f = 0; f < p.frames; ++f) {
    const auto [cx, cy] = clipCentre(p, f);
    for (int y = 0; y < p.height; ++y) {
      for (int x = 0; x < p.width; ++x) {
        int hits = 0;
        for (int sy = 0; sy < kSuper; ++sy)
          for (int sx = 0; sx < kSuper; ++sx) {
            const float px = static_cast<float>(x) + (static_cast<float>(sx) + 0.5f) / kSuper;
            const float py = static_cast<float>(y) + (static_cast<float>(sy) + 0.5f) / kSuper;
            hits += inside(p.shape, px - cx, py - cy, p.radius) ? 1 : 0;
          }
        const float a = static_cast<float>(hits) / (kSuper * kSuper);
        const std::size_t index = static_cast<std::size_t>(f) * plane + static_cast<std::size_t>(y * p.width + x);
        for (std::size_t c = 0; c < 3; ++c)
          data[c * frames * plane + index] = 2.0f * (a * fg[c] + (1 - a) * bg[c]) - 1.0f;
      }
    }
  }
  return at::from_blob(data.data(), {3, p.frames, p.height, p.width}, at::TensorOptions().dtype(at::kFloat)).clone();
}

at::Tensor renderChain(const ClipParams& first, const ClipParams& second) {
  return at::cat({renderClip(first), renderClip(second).narrow(1, 1, second.frames - 1)}, 1);
}

at::Tensor objectMask(const at::Tensor& clip, const ClipParams& params) {
  const auto& bg = demoBackgrounds()[static_cast<std::size_t>(params.background)].rgb;
  const at::Tensor background = at::tensor(std::vector<float>{bg[0], bg[1], bg[2]}).mul(2).sub(1).view({3, 1, 1, 1});
  return (clip - background).abs().amax(0, true).gt(0.05).to(at::kFloat);
}

at::Tensor shapeDisagreementMask(const ClipParams& params) {
  at::Tensor any, all;
  for (int s = 0; s < kShapeCount; ++s) {
    ClipParams p = params;
    p.shape = static_cast<Shape>(s);
    const at::Tensor mask = objectMask(renderClip(p), p);
    any = any.defined() ? at::maximum(any, mask) : mask;
    all = all.defined() ? at::minimum(all, mask) : mask;
  }
  return any - all;
}

}  // namespace shotchain::demo
