#pragma once

#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "continuity/shot_stats.h"

namespace shotchain::render {

// A shot of this render that later shots refer to: the one a tag hands off from, the sequence's first
// (the "vs shot 1" figures) and the latest neighbour (the cut figures). Its frame and statistics arrive
// when its decode is done; a later shot keeps its own reference, so a tag can move on meanwhile.
struct PriorShot {
  int index = -1;
  std::string id;
  std::string key;
  at::Tensor lastFrame;  // [3, H, W] float32, −1…1
  std::optional<continuity::ShotStats> stats;
  bool rendered = false;  // rendered in this pass (not read back from disk)
};

}  // namespace shotchain::render
