#include "training/flow_matching.h"

#include <ATen/ATen.h>

namespace shotchain::training {

at::Tensor sampleShiftedSigmas(std::int64_t count, double shift, at::Generator& generator) {
  const at::Tensor u = at::rand({count}, generator, at::TensorOptions().dtype(at::kDouble));
  return (u * shift / (1 + (shift - 1) * u)).to(at::kFloat);
}

FlowMatchingBatch makeFlowMatchingBatch(const at::Tensor& x0, double shift, at::Generator& generator) {
  const std::int64_t batch = x0.size(0);
  FlowMatchingBatch out;
  out.sigma = sampleShiftedSigmas(batch, shift, generator);
  const at::Tensor noise = at::randn(x0.sizes(), generator, x0.options());
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x0.dim()), 1);
  shape[0] = batch;
  const at::Tensor s = out.sigma.view(shape);
  out.noisy = (1 - s) * x0 + s * noise;
  out.target = noise - x0;
  out.timestep = out.sigma * 1000.0;
  return out;
}

}  // namespace shotchain::training
