#pragma once

// Few-step distilled sampling (docs/lora.md §3): a distilled model is given its own denoising steps,
// e.g. [1000, 750, 500, 250], warped through a shifted 1000-step flow schedule exactly as the official
// schedulers do (LightX2V lightx2v/models/schedulers/wan/step_distill/scheduler.py; Self-Forcing
// utils/scheduler.py FlowMatchScheduler with sigma_min 0 and extra_one_step, model/base.py's
// warp_denoising_step), and sampled without guidance with the update it was distilled for.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "sampling/sampler.h"

namespace shotchain::sampling {

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
  std::uint64_t seed =
      0;  // the starting noise (sampling/sampler.h seededNoise) and, for Renoise, the fresh noise after it
  c10::Device device = c10::kCPU;
};

// The schedule sampleFlow runs for SamplerOptions::fewStep: σ_k and 1000·σ_k as above, then σ = 0.
FlowSchedule fewStepFlowSchedule(const FewStepSampling& fewStep, double shift);

// The update of `kind` over that schedule's sigmas (float32, as the official code computes them). Step i
// returns x0 = x − σ_i·v on the last step; before it, x0 + σ_{i+1}·v (Euler) or (1 − σ_{i+1})·x0 +
// σ_{i+1}·ε with ε standard normal from a CPU generator seeded `noiseSeed` (Renoise).
std::unique_ptr<FlowSolver> makeFewStepSolver(FewStepUpdate kind, const std::vector<float>& sigmas,
                                              std::uint64_t noiseSeed);

// sampleFlow over SamplerOptions::fewStep at guidance 1: one conditional model call per step (guidance 1: no unconditional pass). onStep as sampleFlow's.
SampleResult sampleFewStep(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                           const at::Tensor& context, const FewStepOptions& options, const StepCallback& onStep = {},
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace shotchain::sampling
