#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "sampling/sampler.h"
#include "sampling/step_cache.h"
#include "sampling/timestep_matrix.h"

namespace shotchain::sampling {
namespace {

// The seed of the condition noise: apart from the sample noise drawn from the shot seed itself.
std::uint64_t conditionNoiseSeed(std::uint64_t seed) { return seed ^ 0xD1F0C0DEA5EEDull; }

}  // namespace

SampleResult sampleDiffusionForcing(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                                    const at::Tensor& condContext, const at::Tensor& uncondContext,
                                    const SamplerOptions& options, const StepCallback& onStep,
                                    const std::atomic<bool>* cancel, const at::Tensor& initialLatent) {
  const PerFrameSampling& df = *options.perFrame;
  const std::int64_t frames = latentShape[1];
  const std::int64_t ready = df.prefix.defined() ? df.prefix.size(1) : 0;
  if (ready >= frames)
    throw std::invalid_argument("diffusion forcing: the clean prefix (" + std::to_string(ready) +
                                " latent frames) leaves no frame to generate in " + std::to_string(frames));
  if (df.conditionNoise < 0 || df.conditionNoise > 999)
    throw std::invalid_argument("diffusion forcing: condition noise must be within 0…999");

  SampleResult result;
  result.schedule = flowMatchingSchedule(options.steps, options.shift, options.schedule);
  const FlowSchedule& schedule = result.schedule;
  TimestepMatrixRequest request;
  request.frames = frames;
  request.baseFrames = df.baseFrames > 0 ? df.baseFrames : frames;
  request.arStep = df.arStep;
  request.readyFrames = ready;
  request.causalBlockSize = df.causalBlockSize;
  if (frames % request.causalBlockSize != 0)
    throw std::invalid_argument("diffusion forcing: " + std::to_string(frames) +
                                " latent frames are not whole causal blocks of " +
                                std::to_string(request.causalBlockSize));
  const TimestepMatrix matrix = diffusionForcingMatrix(schedule.timesteps, request);
  StepCache* const cache = options.stepCache;
  if (cache) {
    bool oneSchedule = matrix.rows() == schedule.steps();
    for (const auto& interval : matrix.validInterval)
      oneSchedule = oneSchedule && interval == matrix.validInterval.front();
    if (!oneSchedule) throw std::invalid_argument("a step cache needs the frames on one schedule (ar_step 0)");
  }

  at::Tensor x = startingSample(latentShape, options, initialLatent);
  if (ready > 0) {
    if (df.prefix.size(0) != latentShape[0] || df.prefix.size(2) != latentShape[2] ||
        df.prefix.size(3) != latentShape[3])
      throw std::invalid_argument("diffusion forcing: the prefix does not have the latent's channels and size");
    x.narrow(1, 0, ready).copy_(df.prefix);
  }
  const at::Tensor cond = condContext.to(options.device, at::kFloat);
  const at::Tensor uncond = uncondContext.defined() ? uncondContext.to(options.device, at::kFloat) : at::Tensor();
  if (!uncond.defined() && options.guidance != 1.0)
    throw std::invalid_argument("guidance needs the negative prompt's context");

  // One solver (and so one history) per latent frame, as the reference keeps one scheduler per frame.
  std::vector<std::unique_ptr<FlowSolver>> solvers;
  for (std::int64_t f = 0; f < frames; ++f) solvers.push_back(makeSolver(options.solver, widenSigmas(schedule.sigmas)));
  at::Tensor denoised = x.clone();
  at::Generator conditionGenerator = at::make_generator<at::CPUGeneratorImpl>(conditionNoiseSeed(options.seed));

  using Clock = std::chrono::steady_clock;
  bool split = options.splitGuidance;
  const auto rows = static_cast<int>(matrix.rows());
  for (int i = 0; i < rows; ++i) {
    if (cancel != nullptr && cancel->load()) {
      result.cancelled = true;
      break;
    }
    const auto start = Clock::now();
    const auto [first, end] = matrix.validInterval[static_cast<std::size_t>(i)];
    std::vector<std::int64_t> steps;
    for (std::int64_t f = first; f < end; ++f) steps.push_back(matrix.at(matrix.timesteps, i, f));
    at::Tensor input = x.narrow(1, first, end - first);
    if (df.conditionNoise > 0 && first < ready) {
      const double factor = 0.001 * df.conditionNoise;
      input = input.clone();
      at::Tensor held = input.narrow(1, 0, ready - first);
      const at::Tensor eps =
          at::randn(held.sizes(), conditionGenerator, at::TensorOptions().dtype(at::kFloat)).to(held.device());
      held.copy_(held * (1.0 - factor) + eps * factor);
      std::fill(steps.begin(), steps.begin() + (ready - first), df.conditionNoise);
    }
    const at::Tensor t = at::tensor(steps, at::TensorOptions().dtype(at::kLong));
    if (cache) cache->beginStep(i);
    const at::Tensor v = velocityWithFallback(
        [&](bool splitCall) {
          return guidedVelocityPerFrame(denoiser, input, t, cond, uncond, options.guidance, splitCall, cache);
        },
        options, i, split, result);
    std::int64_t largestTimestep = 0;
    for (std::int64_t f = first; f < end; ++f) {
      if (!matrix.updates(i, f)) continue;
      const auto solverStep = static_cast<int>(matrix.at(matrix.stepIndex, i, f) - 1);
      FlowSolver& solver = *solvers[static_cast<std::size_t>(f)];
      // The solver keeps what it is given: a frame of its own, not a view into x.
      const at::Tensor next = solver.step(solverStep, x.narrow(1, f, 1).clone(), v.narrow(1, f - first, 1).clone());
      x.narrow(1, f, 1).copy_(next);
      denoised.narrow(1, f, 1).copy_(solver.denoised());
      largestTimestep = std::max(largestTimestep, matrix.at(matrix.timesteps, i, f));
    }
    requireFiniteSample(x, i, rows);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.stepSeconds.push_back(seconds);
    result.stepsDone = i + 1;
    if (onStep) {
      std::int64_t leastAdvanced = schedule.steps();
      for (std::int64_t f = ready; f < frames; ++f)
        leastAdvanced = std::min(leastAdvanced, matrix.at(matrix.stepIndex, i, f));
      const float sigma =
          schedule.sigmas[static_cast<std::size_t>(std::clamp<std::int64_t>(leastAdvanced, 0, schedule.steps()))];
      const StepEvent event{i, rows, sigma, largestTimestep, x, denoised, seconds};
      if (!onStep(event)) {
        result.cancelled = i + 1 < rows;
        break;
      }
    }
  }
  result.latent = x;
  return result;
}

}  // namespace shotchain::sampling
