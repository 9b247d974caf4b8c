#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include <ATen/ATen.h>

#include "test_support.h"

namespace shotchain::testing {

struct ErrorFigures {
  double maxAbs = 0;
  double relL2 = 0;
};

inline ErrorFigures compareTensors(const at::Tensor& got, const at::Tensor& expected) {
  const at::Tensor g = got.to(at::kDouble), e = expected.to(at::kDouble);
  return {(g - e).abs().max().item<double>(), ((g - e).norm() / e.norm()).item<double>()};
}

// A golden README's tolerance for one kind of tensor.
struct Tolerance {
  double maxAbs, relL2;
};

// Prints `what`'s errors; returns why it is outside `tolerance` (its shape, or its errors), empty when inside.
inline std::string goldenMismatch(const std::string& what, const at::Tensor& got, const at::Tensor& expected,
                                  Tolerance tolerance) {
  if (got.sizes() != expected.sizes())
    return what + ": shape " + c10::str(got.sizes()) + " vs " + c10::str(expected.sizes());
  const ErrorFigures e = compareTensors(got, expected);
  std::printf("  %-40s max-abs %.3g  rel-L2 %.3g\n", what.c_str(), e.maxAbs, e.relL2);
  if (e.maxAbs <= tolerance.maxAbs && e.relL2 <= tolerance.relL2) return {};
  return what + ": max-abs " + std::to_string(e.maxAbs) + ", rel-L2 " + std::to_string(e.relL2);
}

}  // namespace shotchain::testing
