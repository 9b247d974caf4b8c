#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "sampling/flow_schedule.h"
#include "sampling/flow_solvers.h"

namespace shotchain::models {
class VideoDiffusionModel;
}

namespace shotchain::sampling {

class StepCache;

// The velocity model seen by the sampler: x [B, C, F, H, W] float32, t [B] int64 model
// timesteps (or [B, F]: one per latent frame, diffusion forcing), context [B, L, D] → velocity
// [B, C, F, H, W]. Real DiT or analytic test field.
using Denoiser = std::function<at::Tensor(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context)>;

// A DiT of any family as a Denoiser (its forwardBatch, with its frame-rate conditioning index).
// The model must outlive the function.
Denoiser ditDenoiser(const models::VideoDiffusionModel& model, std::int64_t fpsIndex = 0);

// Draws standard normal float32 noise of `shape` on the CPU from `seed` (libtorch's CPU
// generator, so a seed gives the same noise on any device), then moves it to `device`.
at::Tensor seededNoise(const std::vector<std::int64_t>& shape, std::uint64_t seed, c10::Device device = c10::kCPU);

// Classifier-free guidance, one forward of batch 2 (cond first, uncond second):
// A text context [L, D] with zero rows appended up to `length` (what the DiT does up to text_len).
at::Tensor padContext(const at::Tensor& context, std::int64_t length);

// v = v_uncond + g·(v_cond − v_uncond). x [C, F, H, W]; contexts [L_c, D] and [L_u, D] are
// zero-padded to a common length (the DiT zero-pads context to text_len without a mask, so
// this is exact). guidance == 1 runs the conditional branch alone (batch 1). `split`: two
// batch-1 calls instead (the reference's way; about half the activation peak).
// `cache` (optional, sampling/step_cache.h): told which branches each call carries; with EasyCache it
// may answer a step without a model call.
at::Tensor guidedVelocity(const Denoiser& denoiser, const at::Tensor& x, std::int64_t timestep,
                          const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance,
                          bool split = false, StepCache* cache = nullptr);
// The same at a timestep given as a 0-d tensor (float for a few-step schedule's 937.5).
at::Tensor guidedVelocityAt(const Denoiser& denoiser, const at::Tensor& x, const at::Tensor& timestep,
                            const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance,
                            bool split = false, StepCache* cache = nullptr);
// The same with one timestep per latent frame: timesteps [F] int64 (or float).
at::Tensor guidedVelocityPerFrame(const Denoiser& denoiser, const at::Tensor& x, const at::Tensor& timesteps,
                                  const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance,
                                  bool split = false, StepCache* cache = nullptr);

struct StepEvent {
  int step = 0;               // 0-based index of the step just taken (an iteration of the matrix, per frame)
  int steps = 0;              // total steps
  float sigma = 0;            // sigma of `latent` (σ_{step+1}; 0 after the last step; per frame: the noisiest frame's)
  std::int64_t timestep = 0;  // model timestep used by this step (per frame: the largest one updated)
  const at::Tensor& latent;   // the sample after the step [C, F, H, W]
  const at::Tensor& denoised;  // the solver's x₀ prediction at this step (for previews)
  double seconds = 0;          // wall time of this step (model + solver)
};
// Called after every step; return false to cancel (sampling stops before the next model call).
using StepCallback = std::function<bool(const StepEvent&)>;

// A step that left values in the sample that are not finite (a NaN or an infinity): sampling stops there, the
// shot fails naming the step, and nothing of it is written.
class NonFiniteSample : public std::runtime_error {
 public:
  NonFiniteSample(int step, int steps);
  int step() const { return step_; }

 private:
  int step_;
};
// Throws NonFiniteSample when `sample` holds a value that is not finite after step `step` (0-based) of `steps`.
void requireFiniteSample(const at::Tensor& sample, int step, int steps);
// Called before each model call with the sample about to be evaluated; may modify it in place
// (hook for continuity modes that hold a latent slot through sampling).
using BeforeStepHook = std::function<void(int step, float sigma, at::Tensor& latent)>;

// Diffusion forcing (continuation.md): every latent frame has its own timestep and its own solver
// history, advanced by the timestep matrix (sampling/timestep_matrix.h). For models trained that
// way (SkyReels-V2 DF, causal Wan); a model with one timestep per clip never saw it.
struct PerFrameSampling {
  // Clean latents [C, n, h, w] that start the shot (a handed-off tail): frames 0..n−1 are fed at
  // timestep 0 — or at `conditionNoise` — and never updated, so they leave sampling bit-identical.
  at::Tensor prefix;
  // SkyReels' addnoise_condition: the prefix is fed as (1 − c/1000)·x + (c/1000)·ε at timestep c
  // (ε drawn again each iteration from the seed). 0: clean at timestep 0.
  int conditionNoise = 0;
  int arStep = 0;           // 0: all generated frames share the schedule; k: each starts k iterations later
  int baseFrames = 0;       // frames fed to the model at once (a window sliding over a long shot); 0: all
  int causalBlockSize = 1;  // frames that share one timestep (the model's causal block)
};

// Few-step distilled sampling (sampling/few_step.h): the update the model was distilled for.
enum class FewStepUpdate {
  Euler,    // LightX2V: x0 = x − σ·v, x_next = x0 + σ_next·v (deterministic)
  Renoise,  // Self-Forcing, CausVid, LongLive: x0 = x − σ·v, x_next = (1 − σ_next)·x0 + σ_next·ε (fresh noise)
};

// A distilled model's own denoising steps (descending, in 1..1000), warped through SamplerOptions::shift.
struct FewStepSampling {
  std::vector<int> steps{1000, 750, 500, 250};
  FewStepUpdate update = FewStepUpdate::Euler;
};

// Two experts of one shape (docs/wan22.md §8): the high-noise one for every step whose model timestep (the
// truncated integer) is at or above the boundary, as the official loops switch (t.item() >= boundary·1000),
// each expert with its own guidance.
struct ExpertSwitch {
  Denoiser highNoise = {};
  double boundary = 0;        // in model timesteps (1000 · the family's or the document's fraction)
  double highGuidance = 5.0;  // SamplerOptions::guidance is the low-noise expert's
  // ≥ 0: the split as a step index instead (ComfyUI's two KSamplerAdvanced: steps before it run the
  // high-noise expert), whatever the timesteps.
  int switchStep = -1;
  // Called before the first step of each run of one expert (1: high noise, 0: low noise), e.g. to make
  // that expert resident; `step` is the step about to run.
  std::function<void(int expert, int step)> beforeExpert = {};
};

// The expert (1: high noise, 0: low noise) of step `step` at `timestep`.
inline int expertAt(const ExpertSwitch& experts, std::int64_t timestep, int step = -1) {
  if (experts.switchStep >= 0) return step < experts.switchStep ? 1 : 0;
  return static_cast<double>(timestep) >= experts.boundary ? 1 : 0;
}

struct SamplerOptions {
  int steps = 50;
  double shift = 5.0;  // wan21.md §4.4 (reference default)
  double guidance = 5.0;
  SolverKind solver = SolverKind::UniPC;
  ScheduleKind schedule = ScheduleKind::UniPC;
  std::uint64_t seed = 0;
  c10::Device device = c10::kCPU;
  bool splitGuidance = false;  // two batch-1 model calls per step instead of one batch-2 call
  // When set, an out-of-memory in a batch-2 step calls it (to return the device cache), switches to
  // split guidance and retries that step; SampleResult records it. Unset: the error propagates.
  std::function<void()> onOutOfMemory;
  // Set: diffusion forcing (one timestep per latent frame); unset: one timestep for the clip.
  std::optional<PerFrameSampling> perFrame;
  // Clean latents [C, n, h, w] that start the clip, for a model trained to continue from them
  // (DitCapabilities::cleanFirstFrames; Wan 2.2 TI2V's image-to-video loop): written over frames 0..n−1
  // before the first model call and after every step, and fed at timestep 0 while the other frames share
  // the schedule. They leave sampling bit-identical. Not with perFrame.
  at::Tensor cleanPrefix;
  // Set: the step cache of this shot (one-schedule sampling only; the caller attaches it to the DiT
  // with models::BlockCacheScope when its rule skips blocks). Null: every step computed.
  StepCache* stepCache = nullptr;
  // Set: the steps are these, warped through `shift` and given to the model as float timesteps, with their
  // update (`steps`, `solver` and `schedule` are not used; re-noise draws from seed + 1, a stream's chunk k
  // from seed + 1 + k). Not with perFrame.
  std::optional<FewStepSampling> fewStep;
  // Set: the Denoiser given to sampleFlow is the low-noise expert and this the other (one-schedule sampling
  // only, no step cache).
  std::optional<ExpertSwitch> experts;
};

struct SampleResult {
  at::Tensor latent;  // [C, F, H, W] float32 on the device (the last sample reached)
  bool cancelled = false;
  int stepsDone = 0;
  FlowSchedule schedule;
  std::vector<double> stepSeconds;
  int guidanceSplitAtStep = -1;  // the step whose batch-2 call ran out of memory (−1: none did)
  std::string outOfMemoryError;  // its message, first line
  // With SamplerOptions::experts, per step run: the expert (1: high noise, 0: low noise) and its guidance.
  std::vector<int> experts;
  std::vector<double> guidances;
};

// Text-to-video sampling (wan21.md §4.7 step 2): seeded CPU noise of `latentShape`
// [C, F, H, W] moved to the device, the schedule, and per step one guided (batch-2) model call
// and a solver update. `initialLatent`, when defined, replaces the seeded noise (x at σ₀).
// `cancel` (optional) is polled before every model call. With options.perFrame, the iterations
// are the rows of the diffusion-forcing timestep matrix (sampleDiffusionForcing).
SampleResult sampleFlow(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                        const at::Tensor& condContext, const at::Tensor& uncondContext, const SamplerOptions& options,
                        const StepCallback& onStep = {}, const BeforeStepHook& beforeStep = {},
                        const std::atomic<bool>* cancel = nullptr, const at::Tensor& initialLatent = {});

// The schedule options ask for: the flow-matching one, or the warped few-step one.
FlowSchedule samplingSchedule(const SamplerOptions& options);
// Its solver; `noiseSeed` feeds a few-step re-noise update.
std::unique_ptr<FlowSolver> samplingSolver(const SamplerOptions& options, const FlowSchedule& schedule,
                                           std::uint64_t noiseSeed);
// The model's timestep of step i as a 0-d tensor: int64, or float on a few-step schedule.
at::Tensor modelTimestep(const FlowSchedule& schedule, int i);

// The sample at σ₀: `initialLatent` (a copy on the device) when defined, else the seeded noise.
at::Tensor startingSample(const std::vector<std::int64_t>& latentShape, const SamplerOptions& options,
                          const at::Tensor& initialLatent);

// One step's guided velocity, velocity(split), with the out-of-memory fallback of SamplerOptions: a batch-2
// call that runs out of memory returns the cache, switches `split` on for the rest of the shot, retries,
// and is recorded in `result`.
at::Tensor velocityWithFallback(const std::function<at::Tensor(bool split)>& velocity, const SamplerOptions& options,
                                int step, bool& split, SampleResult& result);

// The per-frame loop behind sampleFlow when options.perFrame is set (sampling/diffusion_forcing.cpp).
SampleResult sampleDiffusionForcing(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                                    const at::Tensor& condContext, const at::Tensor& uncondContext,
                                    const SamplerOptions& options, const StepCallback& onStep,
                                    const std::atomic<bool>* cancel, const at::Tensor& initialLatent);

}  // namespace shotchain::sampling
