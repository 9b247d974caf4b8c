#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "sampling/flow_schedule.h"
#include "sampling/flow_solvers.h"

namespace shotchain::models {
class WanModel;
}

namespace shotchain::sampling {

// The velocity model seen by the sampler: x [B, C, F, H, W] float32, t [B] int64 model
// timesteps, context [B, L, D] → velocity [B, C, F, H, W]. Real DiT or analytic test field.
using Denoiser = std::function<at::Tensor(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context)>;

// The Wan DiT as a Denoiser (WanModel::forwardBatch). The model must outlive the function.
Denoiser wanDenoiser(const models::WanModel& model);

// The reference's negative prompt when the user leaves it empty (wan21.md §4.3).
extern const char* const kWanDefaultNegativePrompt;
// `userNegative` unless it is empty (after trimming ASCII whitespace), else the default.
std::string effectiveNegativePrompt(std::string_view userNegative);

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
at::Tensor guidedVelocity(const Denoiser& denoiser, const at::Tensor& x, std::int64_t timestep,
                          const at::Tensor& condContext, const at::Tensor& uncondContext, double guidance,
                          bool split = false);

struct StepEvent {
  int step = 0;            // 0-based index of the step just taken
  int steps = 0;           // total steps
  float sigma = 0;         // sigma of `latent` (σ_{step+1}; 0 after the last step)
  std::int64_t timestep = 0;  // model timestep used by this step
  const at::Tensor& latent;   // the sample after the step [C, F, H, W]
  const at::Tensor& denoised; // the solver's x₀ prediction at this step (for previews)
  double seconds = 0;         // wall time of this step (model + solver)
};
// Called after every step; return false to cancel (sampling stops before the next model call).
using StepCallback = std::function<bool(const StepEvent&)>;
// Called before each model call with the sample about to be evaluated; may modify it in place
// (hook for continuity modes that hold a latent slot through sampling).
using BeforeStepHook = std::function<void(int step, float sigma, at::Tensor& latent)>;

struct SamplerOptions {
  int steps = 50;
  double shift = 5.0;                       // wan21.md §4.4 (reference default)
  double guidance = 5.0;
  SolverKind solver = SolverKind::UniPC;
  ScheduleKind schedule = ScheduleKind::UniPC;
  std::uint64_t seed = 0;
  c10::Device device = c10::kCPU;
  bool splitGuidance = false;  // two batch-1 model calls per step instead of one batch-2 call
  // When set, an out-of-memory in a batch-2 step calls it (to return the device cache), switches to
  // split guidance and retries that step; SampleResult records it. Unset: the error propagates.
  std::function<void()> onOutOfMemory;
};

struct SampleResult {
  at::Tensor latent;        // [C, F, H, W] float32 on the device (the last sample reached)
  bool cancelled = false;
  int stepsDone = 0;
  FlowSchedule schedule;
  std::vector<double> stepSeconds;
  int guidanceSplitAtStep = -1;  // the step whose batch-2 call ran out of memory (−1: none did)
  std::string outOfMemoryError;  // its message, first line
};

// Text-to-video sampling (wan21.md §4.7 step 2): seeded CPU noise of `latentShape`
// [C, F, H, W] moved to the device, the schedule, and per step one guided (batch-2) model call
// and a solver update. `initialLatent`, when defined, replaces the seeded noise (x at σ₀).
// `cancel` (optional) is polled before every model call.
SampleResult sampleFlow(const Denoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                        const at::Tensor& condContext, const at::Tensor& uncondContext, const SamplerOptions& options,
                        const StepCallback& onStep = {}, const BeforeStepHook& beforeStep = {},
                        const std::atomic<bool>* cancel = nullptr, const at::Tensor& initialLatent = {});

}  // namespace shotchain::sampling
