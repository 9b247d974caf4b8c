#pragma once

#include <cstdint>
#include <vector>

namespace shotchain::sampling {

// Which reference code path builds the sigmas (wan21.md §4.2, golden README §4).
enum class ScheduleKind {
  // FlowUniPCMultistepScheduler.set_timesteps(steps, shift): steps+1 points from
  // σ_max = float32(0.999) (read back as a double) down to 0, last dropped, then shifted.
  // The reference default (sample_solver='unipc'); also used for Euler here.
  UniPC,
  // get_sampling_sigmas(steps, shift) for sample_solver='dpm++': steps+1 points from 1 to 0,
  // last dropped, then shifted (σ₀ = 1 exactly).
  DpmPP,
};

// A flow-matching schedule for `steps` model evaluations.
struct FlowSchedule {
  std::vector<double> sigmasF64;        // [steps]   σ'_i in float64, before the cast
  std::vector<float> sigmas;            // [steps+1] float32(σ'_i), then 0 (what solvers use)
  std::vector<double> timestepsF64;     // [steps]   1000·σ'_i in float64
  std::vector<std::int64_t> timesteps;  // [steps]   trunc(1000·σ'_i): what the DiT receives
  // A few-step schedule's timesteps as the official code gives them to the model (float32: 937.5);
  // empty: `timesteps`.
  std::vector<float> fractionalTimesteps;

  int steps() const { return static_cast<int>(timesteps.size()); }
};

// σ' = shift·σ / (1 + (shift − 1)·σ), float64, in the reference's evaluation order.
double shiftSigma(double sigma, double shift);

// numpy.linspace(start, stop, num): start + i·((stop − start)/(num − 1)), last point = stop.
std::vector<double> linspace(double start, double stop, int num);

// The reference schedule. steps ≥ 1, shift > 0; throws std::invalid_argument otherwise.
FlowSchedule flowMatchingSchedule(int steps, double shift, ScheduleKind kind = ScheduleKind::UniPC);

}  // namespace shotchain::sampling
