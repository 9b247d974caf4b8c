#include "sampling/sampler.h"

#include <chrono>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "memory/out_of_memory.h"
#include "models/video_diffusion_model.h"
#include "sampling/few_step.h"
#include "sampling/step_cache.h"

namespace shotchain::sampling {

Denoiser ditDenoiser(const models::VideoDiffusionModel& model, std::int64_t fpsIndex) {
  return [&model, fpsIndex](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
    return model.forwardBatch(x, t, context, fpsIndex);
  };
}

at::Tensor seededNoise(const std::vector<std::int64_t>& shape, std::uint64_t seed, c10::Device device) {
  // The CPU generator exists under the same name in libtorch 1.13 and 2.x.
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Tensor noise = at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
  return device.is_cpu() ? noise : noise.to(device);
}

at::Tensor padContext(const at::Tensor& context, std::int64_t length) {
  if (context.dim() != 2) throw std::invalid_argument("context must be [L, D]");
  const std::int64_t have = context.size(0);
  if (have == length) return context;
  return at::constant_pad_nd(context, {0, 0, 0, length - have}, 0.0);
}

namespace {

// timesteps: a 0-d tensor (one for the clip) or [F] (one per latent frame); rows() gives n copies.
at::Tensor guided(const Denoiser& denoiser, const at::Tensor& x, const at::Tensor& timesteps,
                  const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance, bool split,
                  StepCache* cache) {
  const at::Tensor steps = timesteps.to(x.device(), timesteps.is_floating_point() ? at::kFloat : at::kLong);
  const auto rows = [&](std::int64_t n) {
    return steps.dim() == 0 ? steps.reshape({1}).expand({n}).contiguous()
                            : steps.unsqueeze(0).expand({n, steps.size(0)}).contiguous();
  };
  // Reference: noise_pred_uncond + guide_scale * (noise_pred_cond - noise_pred_uncond).
  const auto combine = [&](const at::Tensor& vCond, const at::Tensor& vUncond) {
    return vUncond + guidance * (vCond - vUncond);
  };
  if (cache && cache->skipsWholeCalls()) {
    cache->beginCall(guidance == 1.0 ? std::vector<int>{0} : std::vector<int>{0, 1});
    if (cache->reuseOutputs(x)) {
      const at::Tensor vCond = cache->reusedOutput(0, x);
      return guidance == 1.0 ? vCond : combine(vCond, cache->reusedOutput(1, x));
    }
  }
  const auto computed = [&](int branch, const at::Tensor& v) {
    if (cache) cache->outputComputed(branch, x, v);
    return v;
  };
  auto single = [&](const at::Tensor& context, int branch) {
    if (cache) cache->beginCall({branch});
    return computed(branch, denoiser(x.unsqueeze(0), rows(1), context.to(x.device()).unsqueeze(0))[0]);
  };
  if (guidance == 1.0) return single(condContext, 0);
  if (split) {
    const at::Tensor vCond = single(condContext, 0);
    const at::Tensor vUncond = single(uncondContext, 1);
    return combine(vCond, vUncond);
  }
  if (condContext.size(1) != uncondContext.size(1))
    throw std::invalid_argument("conditional and unconditional contexts differ in width");
  const std::int64_t length = std::max(condContext.size(0), uncondContext.size(0));
  const at::Tensor context =
      at::stack({padContext(condContext, length), padContext(uncondContext, length)}).to(x.device());
  const at::Tensor batch = x.unsqueeze(0).expand({2, x.size(0), x.size(1), x.size(2), x.size(3)}).contiguous();
  if (cache) cache->beginCall({0, 1});
  const at::Tensor v = denoiser(batch, rows(2), context);
  return combine(computed(0, v[0]), computed(1, v[1]));
}

}  // namespace

at::Tensor guidedVelocity(const Denoiser& denoiser, const at::Tensor& x, std::int64_t timestep,
                          const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance, bool split,
                          StepCache* cache) {
  return guided(denoiser, x, at::scalar_tensor(timestep, at::kLong), condContext, uncondContext, guidance, split,
                cache);
}

at::Tensor guidedVelocityAt(const Denoiser& denoiser, const at::Tensor& x, const at::Tensor& timestep,
                            const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance, bool split,
                            StepCache* cache) {
  if (timestep.dim() != 0) throw std::invalid_argument("guidedVelocityAt: one timestep (a 0-d tensor) expected");
  return guided(denoiser, x, timestep, condContext, uncondContext, guidance, split, cache);
}

at::Tensor guidedVelocityPerFrame(const Denoiser& denoiser, const at::Tensor& x, const at::Tensor& timesteps,
                                  const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance,
                                  bool split, StepCache* cache) {
  if (timesteps.dim() != 1 || timesteps.size(0) != x.size(1))
    throw std::invalid_argument("per-frame timesteps: one per latent frame expected");
  return guided(denoiser, x, timesteps, condContext, uncondContext, guidance, split, cache);
}

namespace {

// SamplerOptions::cleanPrefix: the frames it covers, put back out of place (the solver may keep the
// tensor it returned), and the per-frame timesteps that feed them at 0.
class CleanPrefix {
 public:
  CleanPrefix(const at::Tensor& prefix, const std::vector<std::int64_t>& shape) : prefix_(prefix), frames_(shape[1]) {
    if (!prefix_.defined()) return;
    if (prefix_.dim() != 4 || prefix_.size(0) != shape[0] || prefix_.size(1) < 1 || prefix_.size(1) >= shape[1] ||
        prefix_.size(2) != shape[2] || prefix_.size(3) != shape[3])
      throw std::invalid_argument("clean prefix " + c10::str(prefix_.sizes()) + " does not start a latent of shape " +
                                  c10::str(at::IntArrayRef(shape)) + " (it must leave at least one frame to sample)");
  }
  std::int64_t frames() const { return prefix_.defined() ? prefix_.size(1) : 0; }
  at::Tensor hold(const at::Tensor& x) const {
    if (!prefix_.defined()) return x;
    return at::cat({prefix_.to(x.device(), x.scalar_type()), x.narrow(1, frames(), frames_ - frames())}, 1);
  }
  at::Tensor timesteps(const at::Tensor& t) const {
    at::Tensor rows = t.reshape({1}).expand({frames_}).clone();
    rows.narrow(0, 0, frames()).zero_();
    return rows;
  }

 private:
  at::Tensor prefix_;
  std::int64_t frames_;
};

}  // namespace

FlowSchedule samplingSchedule(const SamplerOptions& options) {
  if (options.fewStep) return fewStepFlowSchedule(*options.fewStep, options.shift);
  return flowMatchingSchedule(options.steps, options.shift, options.schedule);
}

std::unique_ptr<FlowSolver> samplingSolver(const SamplerOptions& options, const FlowSchedule& schedule,
                                           std::uint64_t noiseSeed) {
  if (options.fewStep) return makeFewStepSolver(options.fewStep->update, schedule.sigmas, noiseSeed);
  return makeSolver(options.solver, widenSigmas(schedule.sigmas));
}

at::Tensor modelTimestep(const FlowSchedule& schedule, int i) {
  const auto k = static_cast<std::size_t>(i);
  if (!schedule.fractionalTimesteps.empty()) return at::scalar_tensor(schedule.fractionalTimesteps[k], at::kFloat);
  return at::scalar_tensor(schedule.timesteps[k], at::kLong);
}

at::Tensor startingSample(const std::vector<std::int64_t>& latentShape, const SamplerOptions& options,
                          const at::Tensor& initialLatent) {
  if (!initialLatent.defined()) return seededNoise(latentShape, options.seed, options.device);  // x at σ₀ as drawn
  if (initialLatent.sizes() != at::IntArrayRef(latentShape))
    throw std::invalid_argument("initial latent does not have the latent shape");
  return initialLatent.to(options.device, at::kFloat).clone();
}

at::Tensor velocityWithFallback(const std::function<at::Tensor(bool split)>& velocity, const SamplerOptions& options,
                                int step, bool& split, SampleResult& result) {
  at::Tensor v;
  try {
    v = velocity(split);
  } catch (const std::exception& error) {
    if (split || options.guidance == 1.0 || !options.onOutOfMemory || !memory::isOutOfMemory(error)) throw;
    result.guidanceSplitAtStep = step;
    result.outOfMemoryError = memory::firstLineOf(error.what());
  }
  if (!v.defined()) {  // outside the handler, so the failed call's tensors are gone
    options.onOutOfMemory();
    split = true;
    v = velocity(split);
  }
  return v;
}

SampleResult sampleFlow(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                        const at::Tensor& condContext, const at::Tensor& uncondContext, const SamplerOptions& options,
                        const StepCallback& onStep, const BeforeStepHook& beforeStep, const std::atomic<bool>* cancel,
                        const at::Tensor& initialLatent) {
  if (latentShape.size() != 4) throw std::invalid_argument("latent shape must be [C, F, H, W]");
  if (options.perFrame && options.cleanPrefix.defined())
    throw std::invalid_argument(
        "a clean prefix is for one-schedule sampling, not diffusion forcing (give it as perFrame.prefix)");
  if (options.perFrame && options.fewStep)
    throw std::invalid_argument("a few-step schedule is one schedule for the clip, not diffusion forcing");
  if (options.experts && (options.perFrame || options.stepCache))
    throw std::invalid_argument("two experts are sampled on one schedule for the clip, without a step cache");
  if (options.perFrame)
    return sampleDiffusionForcing(denoiser, latentShape, condContext, uncondContext, options, onStep, cancel,
                                  initialLatent);
  SampleResult result;
  result.schedule = samplingSchedule(options);
  const FlowSchedule& schedule = result.schedule;
  std::unique_ptr<FlowSolver> solver = samplingSolver(options, schedule, options.seed + 1);

  at::Tensor x = startingSample(latentShape, options, initialLatent);
  const at::Tensor cond = condContext.to(options.device, at::kFloat);
  const at::Tensor uncond = uncondContext.defined() ? uncondContext.to(options.device, at::kFloat) : at::Tensor();
  if (!uncond.defined() && (options.guidance != 1.0 || (options.experts && options.experts->highGuidance != 1.0)))
    throw std::invalid_argument("guidance needs the negative prompt's context");

  const CleanPrefix clean(options.cleanPrefix, latentShape);
  int runningExpert = -1;
  x = clean.hold(x);

  using Clock = std::chrono::steady_clock;
  bool split = options.splitGuidance;
  for (int i = 0; i < schedule.steps(); ++i) {
    if (cancel != nullptr && cancel->load()) {
      result.cancelled = true;
      break;
    }
    const auto start = Clock::now();
    const auto k = static_cast<std::size_t>(i);
    if (beforeStep) beforeStep(i, schedule.sigmas[k], x);
    if (options.stepCache) options.stepCache->beginStep(i);
    const int expert = options.experts ? expertAt(*options.experts, schedule.timesteps[k], i) : 0;
    if (options.experts) {
      if (expert != runningExpert && options.experts->beforeExpert) options.experts->beforeExpert(expert, i);
      runningExpert = expert;
      result.experts.push_back(expert);
    }
    const Denoiser& model = expert == 1 ? options.experts->highNoise : denoiser;
    const double guidance = expert == 1 ? options.experts->highGuidance : options.guidance;
    if (options.experts) result.guidances.push_back(guidance);
    const at::Tensor v = velocityWithFallback(
        [&](bool splitCall) {
          if (clean.frames() > 0)
            return guidedVelocityPerFrame(model, x, clean.timesteps(modelTimestep(schedule, i)), cond, uncond, guidance,
                                          splitCall, options.stepCache);
          return guidedVelocityAt(model, x, modelTimestep(schedule, i), cond, uncond, guidance, splitCall,
                                  options.stepCache);
        },
        options, i, split, result);
    x = clean.hold(solver->step(i, x, v));
    requireFiniteSample(x, i, schedule.steps());
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.stepSeconds.push_back(seconds);
    result.stepsDone = i + 1;
    if (onStep) {
      const StepEvent event{
          i, schedule.steps(), schedule.sigmas[k + 1], schedule.timesteps[k], x, solver->denoised(), seconds};
      if (!onStep(event)) {
        result.cancelled = i + 1 < schedule.steps();
        break;
      }
    }
  }
  result.latent = x;
  return result;
}

NonFiniteSample::NonFiniteSample(int step, int steps)
    : std::runtime_error("step " + std::to_string(step + 1) + " of " + std::to_string(steps) +
                         " left values in the sample that are not finite (NaN or infinity)"),
      step_(step) {}

void requireFiniteSample(const at::Tensor& sample, int step, int steps) {
  if (!at::isfinite(sample).all().item<bool>()) throw NonFiniteSample(step, steps);
}

}  // namespace shotchain::sampling
