#pragma once

#include <chrono>

namespace shotchain::util {

// Wall-clock timing of the render's stages.
using Stopwatch = std::chrono::steady_clock;

inline double secondsSince(Stopwatch::time_point start) {
  return std::chrono::duration<double>(Stopwatch::now() - start).count();
}

}  // namespace shotchain::util
