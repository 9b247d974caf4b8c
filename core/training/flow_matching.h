#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace shotchain::training {

// One flow-matching training batch (the sampler's convention, wan21.md §4): x_σ = (1 − σ)·x₀ + σ·ε,
// the model sees t = 1000·σ and must predict the velocity ε − x₀.
struct FlowMatchingBatch {
  at::Tensor noisy;     // [B, C, F, H, W]
  at::Tensor timestep;  // [B] float32, 1000·σ
  at::Tensor target;    // [B, C, F, H, W] ε − x₀
  at::Tensor sigma;     // [B]
};

// σ from the shifted uniform distribution: u ~ U(0, 1), σ = shift·u / (1 + (shift − 1)·u), the
// density the sampler's shifted schedule spends its steps on.
at::Tensor sampleShiftedSigmas(std::int64_t count, double shift, at::Generator& generator);

FlowMatchingBatch makeFlowMatchingBatch(const at::Tensor& x0, double shift, at::Generator& generator);

}  // namespace shotchain::training
