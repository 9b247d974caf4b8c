#include "sampling/flow_schedule.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace shotchain::sampling {

namespace {
constexpr int kTrainTimesteps = 1000;
}

double shiftSigma(double sigma, double shift) {
  // numpy: shift * sigmas / (1 + (shift - 1) * sigmas), evaluated left to right.
  const double numerator = shift * sigma;
  const double denominator = 1.0 + (shift - 1.0) * sigma;
  return numerator / denominator;
}

std::vector<double> linspace(double start, double stop, int num) {
  std::vector<double> out;
  if (num <= 0) return out;
  out.reserve(static_cast<std::size_t>(num));
  if (num == 1) {
    out.push_back(start);
    return out;
  }
  // numpy: step = (stop - start) / div; y = arange(num) * step; y += start; y[-1] = stop.
  const double step = (stop - start) / static_cast<double>(num - 1);
  for (int i = 0; i < num; ++i) {
    const double scaled = static_cast<double>(i) * step;
    out.push_back(scaled + start);
  }
  out.back() = stop;
  return out;
}

FlowSchedule flowMatchingSchedule(int steps, double shift, ScheduleKind kind) {
  if (steps < 1) throw std::invalid_argument("sampling steps must be at least 1, got " + std::to_string(steps));
  if (!(shift > 0.0) || !std::isfinite(shift))
    throw std::invalid_argument("schedule shift must be a positive number, got " + std::to_string(shift));

  double sigmaMax = 1.0;
  if (kind == ScheduleKind::UniPC) {
    // Training table: sigmas = 1 − linspace(1, 1/1000, 1000)[::-1], stored as float32;
    // σ_max = sigmas[0].item() = float32(1 − 0.001) read back as a double, σ_min = 0.
    const double lastAlpha = 1.0 / kTrainTimesteps;
    sigmaMax = static_cast<double>(static_cast<float>(1.0 - lastAlpha));
  }
  std::vector<double> base = linspace(sigmaMax, 0.0, steps + 1);
  base.pop_back();

  FlowSchedule schedule;
  schedule.sigmasF64.reserve(base.size());
  for (const double b : base) {
    // DPM++ path: get_sampling_sigmas shifts, then set_timesteps(sigmas=…) applies the
    // scheduler's own shift of 1 (s·σ / (1 + 0·σ) = σ exactly), so one shift suffices.
    schedule.sigmasF64.push_back(shiftSigma(b, shift));
  }
  for (const double s : schedule.sigmasF64) {
    const double t = s * static_cast<double>(kTrainTimesteps);
    schedule.timestepsF64.push_back(t);
    schedule.timesteps.push_back(static_cast<std::int64_t>(t));  // truncation, as .to(int64)
    schedule.sigmas.push_back(static_cast<float>(s));
  }
  schedule.sigmas.push_back(0.0f);  // final_sigmas_type "zero"
  return schedule;
}

}  // namespace shotchain::sampling
