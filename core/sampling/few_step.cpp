#include "sampling/few_step.h"

#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace shotchain::sampling {

FewStepSchedule warpedDenoisingSteps(const std::vector<int>& steps, double shift) {
  if (steps.empty()) throw std::invalid_argument("few-step sampling: no denoising steps");
  if (!(shift > 0)) throw std::invalid_argument("few-step sampling: the shift must be above 0");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i] < 1 || steps[i] > 1000)
      throw std::invalid_argument("few-step sampling: step " + std::to_string(steps[i]) + " is outside 1..1000");
    if (i > 0 && steps[i] >= steps[i - 1])
      throw std::invalid_argument("few-step sampling: the steps must descend (" + std::to_string(steps[i - 1]) +
                                  " then " + std::to_string(steps[i]) + ")");
  }
  const at::Tensor s = at::linspace(1.0, 0.0, 1001, at::TensorOptions().dtype(at::kFloat)).narrow(0, 0, 1000);
  const at::Tensor sigmas = s * static_cast<float>(shift) / (1 + (static_cast<float>(shift) - 1) * s);
  const at::Tensor timesteps = sigmas * 1000;
  FewStepSchedule out;
  for (const int step : steps) {
    out.sigmas.push_back(sigmas[1000 - step].item<float>());
    out.timesteps.push_back(timesteps[1000 - step].item<float>());
  }
  return out;
}

FlowSchedule fewStepFlowSchedule(const FewStepSampling& fewStep, double shift) {
  const FewStepSchedule warped = warpedDenoisingSteps(fewStep.steps, shift);
  FlowSchedule schedule;
  schedule.sigmas = warped.sigmas;
  schedule.sigmas.push_back(0.0f);
  schedule.fractionalTimesteps = warped.timesteps;
  for (std::size_t k = 0; k < warped.timesteps.size(); ++k) {
    schedule.sigmasF64.push_back(warped.sigmas[k]);
    schedule.timestepsF64.push_back(warped.timesteps[k]);
    schedule.timesteps.push_back(static_cast<std::int64_t>(warped.timesteps[k]));
  }
  return schedule;
}

namespace {

class FewStepSolver final : public FlowSolver {
 public:
  FewStepSolver(FewStepUpdate kind, const std::vector<float>& sigmas, std::uint64_t noiseSeed)
      : FlowSolver(widenSigmas(sigmas)),
        kind_(kind),
        sigmas32_(sigmas),
        noise_(at::make_generator<at::CPUGeneratorImpl>(noiseSeed)) {}

  at::Tensor step(int i, const at::Tensor& sample, const at::Tensor& velocity) override {
    checkStep(i);
    const auto k = static_cast<std::size_t>(i);
    denoised_ = sample - sigmas32_[k] * velocity;
    if (i + 1 == steps()) return denoised_;
    const float next = sigmas32_[k + 1];
    if (kind_ == FewStepUpdate::Euler) return denoised_ + next * velocity;
    const at::Tensor eps = at::randn(sample.sizes(), noise_, at::TensorOptions().dtype(at::kFloat)).to(sample.device());
    return (1 - next) * denoised_ + next * eps;
  }

 private:
  FewStepUpdate kind_;
  std::vector<float> sigmas32_;
  at::Generator noise_;
};

}  // namespace

std::unique_ptr<FlowSolver> makeFewStepSolver(FewStepUpdate kind, const std::vector<float>& sigmas,
                                              std::uint64_t noiseSeed) {
  return std::make_unique<FewStepSolver>(kind, sigmas, noiseSeed);
}

SampleResult sampleFewStep(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                           const at::Tensor& context, const FewStepOptions& options, const StepCallback& onStep,
                           const std::atomic<bool>* cancel) {
  SamplerOptions sampler;
  sampler.fewStep = FewStepSampling{options.steps, options.update};
  sampler.shift = options.shift;
  sampler.guidance = 1.0;
  sampler.seed = options.seed;
  sampler.device = options.device;
  return sampleFlow(denoiser, latentShape, context, {}, sampler, onStep, {}, cancel);
}

}  // namespace shotchain::sampling
