#pragma once

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// The small pieces of a Wan attention block, shared by the DiT and its unit tests.

// RMSNorm over the last dimension, computed in float32 and returned in x's dtype:
// x / sqrt(mean(x²) + eps) · weight. An undefined weight means "no norm" (qk_norm off).
at::Tensor wanRmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

// adaLN modulation of a normalised stream: normed · (1 + scale) + shift (float32).
at::Tensor wanModulate(const at::Tensor& normed, const at::Tensor& shift, const at::Tensor& scale);

}  // namespace shotchain::models
