#include "models/wan/wan_blocks.h"

#include <ATen/ATen.h>

namespace shotchain::models {

at::Tensor wanRmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (!weight.defined()) return x;
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps);
  return (normed * weight).to(x.scalar_type());
}

at::Tensor wanModulate(const at::Tensor& normed, const at::Tensor& shift, const at::Tensor& scale) {
  return at::addcmul(shift, normed, scale + 1.0);
}

}  // namespace shotchain::models
