#pragma once

#include <cmath>

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

}  // namespace shotchain::testing
