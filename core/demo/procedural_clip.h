#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::demo {

// The demo model's world: one shape of one colour moving in one direction over a plain background.
// A bar is a horizontal rectangle of about 3:1: a square's corners were beyond the DiT at 16×16-pixel
// tokens, a bar's aspect is not (resources/README.md).
enum class Shape { Circle, Bar, Triangle };
enum class Direction { Still, Left, Right, Up, Down };

struct NamedColour {
  const char* name;
  std::array<float, 3> rgb;  // 0…1
};

const std::vector<NamedColour>& demoColours();      // red, green, blue, yellow, white, magenta
const std::vector<NamedColour>& demoBackgrounds();  // black, gray
const char* shapeName(Shape shape);
const char* directionName(Direction direction);
constexpr int kShapeCount = 3;
constexpr int kDirectionCount = 5;

struct ClipParams {
  int colour = 0;      // index into demoColours()
  int background = 0;  // index into demoBackgrounds()
  Shape shape = Shape::Circle;
  Direction direction = Direction::Right;
  float x0 = 32, y0 = 32;  // centre at frame 0, pixels
  float speed = 1.5f;      // pixels per frame along the direction (0 when still)
  float radius = 8;        // half the object's extent, pixels
  int width = 64, height = 64, frames = 17;
};

// Deterministic parameters from a seed. Training uses seeds below kHeldOutSeedStart, evaluation
// seeds from it on.
constexpr std::uint64_t kHeldOutSeedStart = 1'000'000'000;
ClipParams randomClipParams(std::uint64_t seed);

// The clip that continues `first` after its last frame: same colour, shape, size and background, the
// object starting where `first` left it (at its frame frames − 1), a new direction and speed drawn from
// `seed` among those whose path stays in frame (a change of direction whenever one fits).
ClipParams continuationClipParams(const ClipParams& first, std::uint64_t seed);

// "a red circle moving right on a black background" ("a red circle staying still on …").
std::string clipPrompt(const ClipParams& params);
std::string clipPrompt(int colour, Shape shape, Direction direction, int background);

// Object centre at frame `frame`.
std::array<float, 2> clipCentre(const ClipParams& params, int frame);
// Unit step (dx, dy) of a direction in image coordinates (y down).
std::array<float, 2> directionStep(Direction direction);

// The clip as float32 [3, frames, height, width] in [−1, 1] (the VAE's range), anti-aliased.
at::Tensor renderClip(const ClipParams& params);
// `first` then `second`'s frames 1… (its frame 0 is `first`'s last): [3, first.frames + second.frames − 1, H, W].
at::Tensor renderChain(const ClipParams& first, const ClipParams& second);
// [1, frames, height, width] float32: 1 where `clip` (renderClip's, or a crop of it) differs from
// the params' background by more than 0.05 in some channel (the object and its anti-aliased edge).
at::Tensor objectMask(const at::Tensor& clip, const ClipParams& params);
// [1, frames, height, width] float32: 1 where the three shapes drawn with these params (same place,
// size and motion) do not all agree (some cover the pixel, some not): where the shape word matters.
at::Tensor shapeDisagreementMask(const ClipParams& params);

}  // namespace shotchain::demo
