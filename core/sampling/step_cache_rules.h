#pragma once

// The skip rules of the step caches (docs/step-cache.md), on plain numbers: what a rule decides from
// the figures of one guidance branch, step by step. Tensor work (the figures themselves, the cached
// residuals) is in sampling/step_cache.h. Every rule computes the first `warmup` steps and the last
// step, and starts afresh at every shot.
#include <optional>
#include <string>
#include <vector>

namespace shotchain::sampling {

// TeaCache (ali-vilab/TeaCache, TeaCache4Wan2.1/teacache_generate.py, its use_ret_steps variant): the
// relative L1 change of the timestep modulation e0 since the previous call, rescaled by a fitted
// polynomial, is accumulated; a step is skipped while the sum stays below the threshold, and the sum
// restarts at every computed step.
class TeaCacheRule {
 public:
  // `coefficients`: highest power first (numpy.poly1d).
  TeaCacheRule(std::vector<double> coefficients, double threshold, int warmup, int steps);
  // `relativeL1`: mean|e0 − e0_prev| / mean|e0_prev| (ignored on warm-up and last steps). True: compute.
  bool compute(int step, double relativeL1);
  double accumulated() const { return accumulated_; }
  double rescaled(double relativeL1) const;

 private:
  std::vector<double> coefficients_;
  double threshold_;
  int warmup_, steps_;
  double accumulated_ = 0;
};

// MagCache (Zehong-Ma/MagCache, MagCache4Wan2.1/magcache_generate.py): the calibrated ratio of the
// residual's magnitude between consecutive steps is multiplied up since the last computed step; its
// distance from 1 is accumulated; skip while that error is below the threshold and at most `maxSkips`
// steps in a row have been skipped.
class MagCacheRule {
 public:
  // `ratios[s]`: this branch's ratio at step s (one per step).
  MagCacheRule(std::vector<double> ratios, double threshold, int maxSkips, int warmup);
  bool compute(int step);
  double error() const { return error_; }

 private:
  std::vector<double> ratios_;
  double threshold_;
  int maxSkips_, warmup_;
  double ratio_ = 1.0, error_ = 0.0;
  int skipped_ = 0;
};

// EasyCache (H-EmbodVis/EasyCache, EasyCache4Wan2.1/easycache_generate.py): the transformation rate
// k = mean|Δoutput| / mean|Δinput| between the last two computed steps predicts the output's relative
// change from the input's; the predictions are accumulated and a step skipped while below the
// threshold. Decided on the conditional branch; the unconditional one follows.
class EasyCacheRule {
 public:
  EasyCacheRule(double threshold, int warmup, int steps);
  // `inputChange`: mean|x − x_prev| (x_prev: the previous step's input, computed or not);
  // `outputMagnitude`: mean|v| of the last computed output. True: compute.
  bool compute(int step, double inputChange, double outputMagnitude);
  // After a computed step: `outputChange` mean|v − v_last| and `inputChange` mean|x − x_last| between it
  // and the last computed step (none for the first).
  void computed(std::optional<double> outputChange, std::optional<double> inputChange);
  std::optional<double> rate() const { return rate_; }
  double accumulated() const { return accumulated_; }

 private:
  double threshold_;
  int warmup_, steps_;
  double accumulated_ = 0;
  std::optional<double> rate_;
};

// First-Block Cache (chengzeyi/ParaAttention): block 0 always runs; the rest is skipped while the
// relative L1 change of block 0's residual since the last computed step is below the threshold (no
// accumulation).
class FirstBlockRule {
 public:
  FirstBlockRule(double threshold, int warmup, int steps);
  // `relativeChange`: mean|r − r_last| / mean|r_last| (r_last: block 0's residual at the last computed step).
  bool compute(int step, double relativeChange) const;

 private:
  double threshold_;
  int warmup_, steps_;
};

// numpy.poly1d(coefficients)(x), highest power first.
double evaluatePolynomial(const std::vector<double>& coefficients, double x);
// MagCache's nearest_interp: `source` resampled to `length` entries by rounding indices.
std::vector<double> nearestInterpolation(const std::vector<double>& source, int length);

// One branch's ratios (0: conditional, 1: unconditional) of interleaved `ratios`, resampled to `steps`.
std::vector<double> branchRatios(const std::vector<double>& interleaved, int branch, int steps);

inline constexpr int kMagCacheMaxSkips = 2;  // magcache_K

}  // namespace shotchain::sampling
