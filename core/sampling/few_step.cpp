#include "sampling/few_step.h"

#include <chrono>
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
      throw std::invalid_argument("few-step sampling: the steps must descend (" + std::to_string(steps[i - 1]) + " then " +
                                  std::to_string(steps[i]) + ")");
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

SampleResult sampleFewStep(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape, const at::Tensor& context,
                           const FewStepOptions& options, const StepCallback& onStep, const std::atomic<bool>* cancel) {
  const FewStepSchedule schedule = warpedDenoisingSteps(options.steps, options.shift);
  SampleResult result;
  result.schedule.sigmas.assign(schedule.sigmas.begin(), schedule.sigmas.end());
  result.schedule.sigmas.push_back(0.0f);
  for (std::size_t k = 0; k < schedule.timesteps.size(); ++k) {
    result.schedule.sigmasF64.push_back(schedule.sigmas[k]);
    result.schedule.timestepsF64.push_back(schedule.timesteps[k]);
    result.schedule.timesteps.push_back(static_cast<std::int64_t>(schedule.timesteps[k]));
  }
  at::Tensor x = seededNoise(latentShape, options.seed, options.device);
  const at::Tensor cond = context.to(options.device, at::kFloat).unsqueeze(0);
  at::Generator renoise = at::make_generator<at::CPUGeneratorImpl>(options.seed + 1);
  const auto steps = static_cast<int>(schedule.sigmas.size());
  for (int i = 0; i < steps; ++i) {
    if (cancel != nullptr && cancel->load()) {
      result.cancelled = true;
      break;
    }
    const auto start = std::chrono::steady_clock::now();
    const auto k = static_cast<std::size_t>(i);
    const at::Tensor t = at::full({1}, schedule.timesteps[k], at::TensorOptions().dtype(at::kFloat).device(options.device));
    const at::Tensor v = denoiser(x.unsqueeze(0), t, cond)[0];
    const at::Tensor x0 = x - schedule.sigmas[k] * v;
    const float next = i + 1 < steps ? schedule.sigmas[k + 1] : 0.0f;
    if (i + 1 == steps) x = x0;
    else if (options.update == FewStepUpdate::Euler) x = x0 + next * v;
    else {
      const at::Tensor eps = at::randn(x.sizes(), renoise, at::TensorOptions().dtype(at::kFloat)).to(x.device());
      x = (1 - next) * x0 + next * eps;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.stepSeconds.push_back(seconds);
    result.stepsDone = i + 1;
    if (onStep) {
      const StepEvent event{i, steps, next, static_cast<std::int64_t>(schedule.timesteps[k]), x, x0, seconds};
      if (!onStep(event)) {
        result.cancelled = i + 1 < steps;
        break;
      }
    }
  }
  result.latent = x;
  return result;
}

}  // namespace shotchain::sampling
