#include "sampling/stream_sampler.h"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

#include "models/kv_cache.h"
#include "models/video_diffusion_model.h"

namespace shotchain::sampling {
namespace {

using Clock = std::chrono::steady_clock;

// timestep: 0-d, int64 or (a few-step schedule's) float.
at::Tensor timestepRows(const at::Tensor& timestep, std::int64_t rows) {
  return timestep.reshape({1}).expand({rows}).contiguous();
}

// v_uncond + g·(v_cond − v_uncond) of one chunk x [C, c, h, w]; `commit` passes on to every call.
at::Tensor guidedChunk(const ChunkDenoiser& denoiser, const at::Tensor& x, const at::Tensor& timestep,
                       const at::Tensor& cond, const at::Tensor& uncond, double guidance, bool split, bool commit) {
  auto single = [&](const at::Tensor& context, std::int64_t branch) {
    return denoiser(x.unsqueeze(0), timestepRows(timestep, 1), context.unsqueeze(0), branch, commit)[0];
  };
  if (guidance == 1.0) return single(cond, 0);
  if (split) {
    const at::Tensor vCond = single(cond, 0);
    const at::Tensor vUncond = single(uncond, 1);
    return vUncond + guidance * (vCond - vUncond);
  }
  const std::int64_t length = std::max(cond.size(0), uncond.size(0));
  const at::Tensor context = at::stack({padContext(cond, length), padContext(uncond, length)});
  const at::Tensor v = denoiser(at::stack({x, x}), timestepRows(timestep, 2), context, 0, commit);
  return v[1] + guidance * (v[0] - v[1]);
}

// The finished chunk's keys and values into the cache of every branch (its velocity is not needed).
void commitChunk(const ChunkDenoiser& denoiser, const at::Tensor& x, const at::Tensor& cond, const at::Tensor& uncond,
                 int branches, bool split) {
  guidedChunk(denoiser, x, at::scalar_tensor(0, at::kLong), cond, uncond, branches > 1 ? 0.0 : 1.0, split, true);
}

}  // namespace

ChunkDenoiser cachedChunkDenoiser(const models::VideoDiffusionModel& model, models::KvCache& cache,
                                  std::int64_t fpsIndex) {
  return [&model, &cache, fpsIndex](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                    std::int64_t firstBranch, bool commit) {
    return model.forwardCached(x, t, context, cache, firstBranch, commit, fpsIndex);
  };
}

ChunkDenoiser rerunChunkDenoiser(const models::VideoDiffusionModel& model, std::int64_t fpsIndex) {
  // Finished frames per branch, kept across calls like a cache would keep their keys and values.
  auto finished = std::make_shared<std::vector<at::Tensor>>(2);
  return [&model, fpsIndex, finished](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                      std::int64_t firstBranch, bool commit) {
    const std::int64_t batch = x.size(0), chunk = x.size(2);
    std::vector<at::Tensor> clips;
    std::int64_t held = -1;
    for (std::int64_t b = 0; b < batch; ++b) {
      const at::Tensor& done = (*finished)[static_cast<std::size_t>(firstBranch + b)];
      clips.push_back(done.defined() ? at::cat({done, x[b]}, 1) : x[b]);
      held = done.defined() ? done.size(1) : 0;
    }
    const at::Tensor clip = at::stack(clips);
    const at::Tensor chunkSteps = t.dim() == 1 ? t.unsqueeze(1).expand({batch, chunk}) : t;
    const at::Tensor rows = chunkSteps.to(chunkSteps.is_floating_point() ? at::kFloat : at::kLong);
    const at::Tensor steps = at::cat({at::zeros({batch, held}, rows.options()), rows}, 1);
    const at::Tensor v = model.forwardBatch(clip, steps, context, fpsIndex).narrow(2, held, chunk);
    if (commit)
      for (std::int64_t b = 0; b < batch; ++b)
        (*finished)[static_cast<std::size_t>(firstBranch + b)] = clips[static_cast<std::size_t>(b)];
    return v;
  };
}

int streamBranches(double guidance) { return guidance == 1.0 ? 1 : 2; }

void commitLatents(const ChunkDenoiser& denoiser, const at::Tensor& latents, std::int64_t chunkFrames,
                   const at::Tensor& condContext, const at::Tensor& uncondContext, int branches, bool split) {
  if (latents.dim() != 4 || chunkFrames <= 0 || latents.size(1) % chunkFrames != 0)
    throw std::invalid_argument("commitLatents: " + std::to_string(latents.dim() == 4 ? latents.size(1) : 0) +
                                " latent frames are not whole chunks of " + std::to_string(chunkFrames));
  at::NoGradGuard noGrad;
  const at::Tensor cond = condContext.to(latents.device(), at::kFloat);
  const at::Tensor uncond = branches > 1 ? uncondContext.to(latents.device(), at::kFloat) : at::Tensor();
  for (std::int64_t first = 0; first < latents.size(1); first += chunkFrames)
    commitChunk(denoiser, latents.narrow(1, first, chunkFrames), cond, uncond, branches, split);
}

SampleResult sampleStream(const ChunkDenoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                          std::int64_t chunkFrames, const at::Tensor& condContext, const at::Tensor& uncondContext,
                          const SamplerOptions& options, const StepCallback& onStep, const ChunkCallback& onChunk,
                          const std::atomic<bool>* cancel) {
  if (latentShape.size() != 4 || chunkFrames <= 0 || latentShape[1] % chunkFrames != 0)
    throw std::invalid_argument("streaming: " + std::to_string(latentShape.size() == 4 ? latentShape[1] : 0) +
                                " latent frames are not whole chunks of " + std::to_string(chunkFrames));
  at::NoGradGuard noGrad;
  SampleResult result;
  result.schedule = samplingSchedule(options);
  const FlowSchedule& schedule = result.schedule;
  const at::Tensor cond = condContext.to(options.device, at::kFloat);
  const at::Tensor uncond = uncondContext.defined() ? uncondContext.to(options.device, at::kFloat) : at::Tensor();
  if (!uncond.defined() && options.guidance != 1.0)
    throw std::invalid_argument("guidance needs the negative prompt's context");

  at::Tensor x = startingSample(latentShape, options, {});
  at::Tensor denoised = x.clone();
  const auto chunks = static_cast<int>(latentShape[1] / chunkFrames);
  const int steps = schedule.steps();
  bool split = options.splitGuidance;
  for (int chunk = 0; chunk < chunks && !result.cancelled; ++chunk) {
    const auto chunkStart = Clock::now();
    const std::int64_t first = chunk * chunkFrames;
    at::Tensor part = x.narrow(1, first, chunkFrames).clone();
    std::unique_ptr<FlowSolver> solver =
        samplingSolver(options, schedule, options.seed + 1 + static_cast<std::uint64_t>(chunk));
    for (int i = 0; i < steps; ++i) {
      if (cancel != nullptr && cancel->load()) {
        result.cancelled = true;
        break;
      }
      const auto start = Clock::now();
      const auto k = static_cast<std::size_t>(i);
      const int step = chunk * steps + i;
      const at::Tensor v = velocityWithFallback(
          [&](bool splitCall) {
            return guidedChunk(denoiser, part, modelTimestep(schedule, i), cond, uncond, options.guidance, splitCall,
                               false);
          },
          options, step, split, result);
      part = solver->step(i, part, v);
      requireFiniteSample(part, step, chunks * steps);
      x.narrow(1, first, chunkFrames).copy_(part);
      denoised.narrow(1, first, chunkFrames).copy_(solver->denoised());
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      result.stepSeconds.push_back(seconds);
      result.stepsDone = step + 1;
      if (onStep) {
        const StepEvent event{step,     chunks * steps, schedule.sigmas[k + 1], schedule.timesteps[k], x,
                              denoised, seconds};
        if (!onStep(event)) {
          result.cancelled = step + 1 < chunks * steps;
          break;
        }
      }
    }
    if (result.cancelled) break;
    commitChunk(denoiser, part, cond, uncond, streamBranches(options.guidance), split);
    if (onChunk) {
      const double seconds = std::chrono::duration<double>(Clock::now() - chunkStart).count();
      const ChunkDone done{chunk, chunks, first, part, seconds};
      if (!onChunk(done)) result.cancelled = chunk + 1 < chunks;
    }
  }
  result.latent = x;
  return result;
}

}  // namespace shotchain::sampling
