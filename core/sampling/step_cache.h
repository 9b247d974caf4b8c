#pragma once

// A step cache for one shot's sampling (docs/step-cache.md): the tensor side of the rules in
// sampling/step_cache_rules.h. TeaCache, MagCache and First-Block Cache skip the DiT's block stack
// through models::BlockCache; EasyCache skips the whole model call in the sampler. The conditional
// (branch 0) and unconditional (branch 1) passes keep separate state; a new StepCache per shot, so
// nothing crosses a cut.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/block_cache.h"
#include "sampling/step_cache_rules.h"
#include "sequence/step_cache_policies.h"

namespace shotchain::sampling {

struct StepCacheConfig {
  StepCachePolicy policy = StepCachePolicy::TeaCache;
  double threshold = 0;
  int steps = 0;
  int warmup = 1;                            // first steps always computed (the last one always is)
  std::vector<double> teaCacheCoefficients;  // highest power first; empty: the raw relative L1
  std::vector<double> magCacheRatios;        // interleaved (conditional, unconditional), any length
  // Calibration: every step computed, the figures `calibrate-cache` fits recorded (rule ignored).
  bool record = false;
};

// What a calibration run saw of one branch, step by step (entry 0: step 0, with no step before it).
struct CalibrationTrace {
  std::vector<double> magnitudeRatio;    // mean over tokens of |r_s| / |r_{s−1}| (r: the block stack's residual)
  std::vector<double> modulationChange;  // mean|e0_s − e0_{s−1}| / mean|e0_{s−1}|
  std::vector<double> outputChange;      // mean|y_s − y_{s−1}| / mean|y_{s−1}| (y: the block stack's output)
};

class StepCache final : public models::BlockCache {
 public:
  explicit StepCache(StepCacheConfig config);

  const StepCacheConfig& config() const { return config_; }

  // Sampler: before step `step`'s model calls.
  void beginStep(int step);
  // Sampler: the rows of the next model call are these branches (0 conditional, 1 unconditional).
  void beginCall(std::vector<int> branches);
  bool skipsWholeCalls() const { return traitsOf(config_.policy).skipsWholeCalls && !config_.record; }
  // EasyCache: true when this step reuses the outputs of the last computed one (decided once a step,
  // on the conditional branch, from the model input x). Then reusedOutput gives each branch's.
  bool reuseOutputs(const at::Tensor& x);
  at::Tensor reusedOutput(int branch, const at::Tensor& x) const;
  // EasyCache: a computed model output v of `branch` for input x.
  void outputComputed(int branch, const at::Tensor& x, const at::Tensor& v);

  // models::BlockCache
  int probeBlocks() const override;
  std::vector<bool> skipRows(const models::BlockStackProbe& probe) override;
  at::Tensor residual(std::int64_t row) const override;
  void store(std::int64_t row, const at::Tensor& residual) override;

  // Per branch: 'C' computed, 's' skipped, one character a step ("" for a branch that never ran).
  std::string pattern(int branch) const;
  int computedPasses() const;  // branch passes through the DiT (or its block stack) that ran
  int skippedPasses() const;
  const CalibrationTrace& trace(int branch) const { return branches_[static_cast<std::size_t>(branch)].trace; }

 private:
  struct Branch {
    std::map<int, bool> computeAt;  // step → decision (a retried call keeps it)
    at::Tensor previousModulation;  // TeaCache: the previous call's e0
    at::Tensor lastProbe;           // First-Block Cache: block 0's residual at the last computed step
    at::Tensor residual;            // the block stack's (or, EasyCache, the model's) last residual
    at::Tensor pendingInput;        // calibration: this call's stack input, until store()
    at::Tensor lastOutput;          // calibration: the stack's last output; EasyCache: the model's
    at::Tensor previousInput;       // EasyCache: the previous step's model input
    at::Tensor lastComputedInput;   // EasyCache: the model input of the last computed step
    std::optional<TeaCacheRule> tea;
    std::optional<MagCacheRule> mag;
    CalibrationTrace trace;
  };
  Branch& branch(int index) { return branches_.at(static_cast<std::size_t>(index)); }
  bool decide(Branch& b, int row, const models::BlockStackProbe& probe);

  StepCacheConfig config_;
  std::vector<Branch> branches_;
  std::optional<EasyCacheRule> easy_;
  std::optional<FirstBlockRule> firstBlock_;
  int step_ = 0;
  std::vector<int> callBranches_{0};
};

}  // namespace shotchain::sampling
