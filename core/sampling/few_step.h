#pragma once

// Few-step distilled sampling (docs/lora.md §3): a distilled model is given its own denoising steps,
// e.g. [1000, 750, 500, 250], warped through a shifted 1000-step flow schedule exactly as the official
// schedulers do (LightX2V lightx2v/models/schedulers/wan/step_distill/scheduler.py; Self-Forcing
// utils/scheduler.py FlowMatchScheduler with sigma_min 0 and extra_one_step, model/base.py's
// warp_denoising_step), and sampled without guidance with the update it was distilled for.
#include <atomic>
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "sampling/sampler.h"

namespace shotchain::sampling {

enum class FewStepUpdate {
  Euler,    // LightX2V: x0 = x − σ·v, x_next = x0 + σ_next·v (deterministic)
  Renoise,  // Self-Forcing, CausVid, LongLive: x0 = x − σ·v, x_next = (1 − σ_next)·x0 + σ_next·ε (fresh noise)
};

struct FewStepSchedule {
  std::vector<float> timesteps;  // what the model is given (float: 937.5, not 937)
  std::vector<float> sigmas;     // σ of each step's input
};

// `steps` descending in 1..1000; throws std::invalid_argument otherwise. σ_k = shift·s/(1 + (shift − 1)·s)
// with s = linspace(1, 0, 1001)[1000 − step_k] in float32, as torch computes it.
FewStepSchedule warpedDenoisingSteps(const std::vector<int>& steps, double shift);

struct FewStepOptions {
  std::vector<int> steps{1000, 750, 500, 250};
  double shift = 5.0;
  FewStepUpdate update = FewStepUpdate::Euler;
  std::uint64_t seed = 0;  // the starting noise (sampling/sampler.h seededNoise) and, for Renoise, the fresh noise after it
  c10::Device device = c10::kCPU;
};

// One conditional model call per step (guidance 1: no unconditional pass). onStep as sampleFlow's.
SampleResult sampleFewStep(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape, const at::Tensor& context,
                           const FewStepOptions& options, const StepCallback& onStep = {},
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace shotchain::sampling
