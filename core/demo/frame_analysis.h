#pragma once

#include <array>
#include <vector>

#include <ATen/core/Tensor.h>

#include "demo/procedural_clip.h"

namespace shotchain::demo {

// What the detector sees in one frame: the object is every pixel that differs from the
// background (median of the border ring) by more than a threshold in some channel.
struct FrameObservation {
  bool found = false;  // kMinObjectPixels ≤ mask pixels ≤ kMaxObjectFraction of the frame
  int pixels = 0;
  float cx = 0, cy = 0;  // centroid, pixels
  int minX = 0, minY = 0, maxX = 0, maxY = 0;
  float fill = 0;    // mask pixels / bounding-box area
  float aspect = 0;  // bounding-box width / height
  bool touchesBorder = false;
  std::array<float, 3> meanRgb{};     // 0…1, over the object's core pixels
  float hue = 0;                      // degrees of meanRgb
  std::array<float, 3> background{};  // 0…1
  int components = 0;                 // 4-connected blobs of at least kMinBlobPixels
};

inline constexpr int kMinObjectPixels = 12;
inline constexpr int kMinBlobPixels = 6;
inline constexpr float kMaxObjectFraction = 0.4f;  // more of the frame than this: not one object

// frame [3, H, W] in [−1, 1] (any float dtype/device).
FrameObservation analyseFrame(const at::Tensor& frame, float threshold = 0.2f);

struct ClipObservation {
  std::vector<FrameObservation> frames;
  int foundFrames = 0;
  int singleObjectFrames = 0;   // found, and exactly one blob
  int colour = -1;              // nearest demoColours() entry to the mean object colour
  Shape shape = Shape::Circle;  // from the median fill ratio and aspect of frames clear of the border
  float fill = 0;
  float aspect = 0;
  Direction direction = Direction::Still;
  float dx = 0, dy = 0;  // fitted centroid displacement over the clip, pixels
  float medianStep = 0;  // median per-frame centroid motion, pixels
  float hue = 0;
};

// video [3, T, H, W] in [−1, 1]. `stillBelow`: total displacement (pixels) under which the clip counts as still.
ClipObservation analyseClip(const at::Tensor& video, float stillBelow = 4.0f);

// Shape from the bounding box: wider than kBarAspect × its height a bar (drawn 3:1; circles and
// triangles are 1:1), else a fill ratio under kTriangleFill a triangle (drawn 0.5, circles 0.79), else a circle.
inline constexpr float kBarAspect = 1.7f;
inline constexpr float kTriangleFill = 0.64f;
Shape shapeFromOutline(float fill, float aspect);
// Nearest colour of demoColours() (RGB distance).
int nearestColour(const std::array<float, 3>& rgb);
float hueDegrees(const std::array<float, 3>& rgb);

}  // namespace shotchain::demo
