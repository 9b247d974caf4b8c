#include "sampling/step_cache.h"

#include <stdexcept>

#include <ATen/ATen.h>

namespace shotchain::sampling {
namespace {

double meanAbs(const at::Tensor& t) { return t.abs().mean().item<double>(); }

// mean|a − b| / mean|b|
double relativeL1(const at::Tensor& a, const at::Tensor& b) {
  const double scale = meanAbs(b);
  return scale > 0 ? meanAbs(a - b) / scale : 0.0;
}

}  // namespace

StepCache::StepCache(StepCacheConfig config) : config_(std::move(config)), branches_(2) {
  if (config_.steps < 1) throw std::invalid_argument("StepCache: a shot of at least one step");
  if (config_.policy == StepCachePolicy::Off && !config_.record)
    throw std::invalid_argument("StepCache: a policy, or a calibration run");
  if (config_.record) return;
  for (int b = 0; b < 2; ++b) {
    Branch& own = branch(b);
    switch (config_.policy) {
      case StepCachePolicy::TeaCache:
        own.tea.emplace(config_.teaCacheCoefficients, config_.threshold, config_.warmup, config_.steps);
        break;
      case StepCachePolicy::MagCache:
        if (config_.magCacheRatios.empty()) throw std::invalid_argument("MagCache needs its calibrated ratios");
        own.mag.emplace(branchRatios(config_.magCacheRatios, b, config_.steps), config_.threshold, kMagCacheMaxSkips,
                        config_.warmup);
        break;
      case StepCachePolicy::EasyCache:
      case StepCachePolicy::FirstBlock:
      case StepCachePolicy::Off:
        break;
    }
  }
  if (config_.policy == StepCachePolicy::EasyCache) easy_.emplace(config_.threshold, config_.warmup, config_.steps);
  if (config_.policy == StepCachePolicy::FirstBlock)
    firstBlock_.emplace(config_.threshold, config_.warmup, config_.steps);
}

void StepCache::beginStep(int step) { step_ = step; }

void StepCache::beginCall(std::vector<int> branches) {
  for (const int b : branches)
    if (b < 0 || b > 1) throw std::invalid_argument("StepCache: branch 0 (conditional) or 1 (unconditional)");
  callBranches_ = std::move(branches);
}

bool StepCache::reuseOutputs(const at::Tensor& x) {
  if (!skipsWholeCalls()) return false;
  Branch& cond = branch(0);
  if (const auto known = cond.computeAt.find(step_); known != cond.computeAt.end()) return !known->second;
  bool compute = true;
  if (cond.previousInput.defined() && cond.lastOutput.defined())
    compute = easy_->compute(step_, meanAbs(x - cond.previousInput), meanAbs(cond.lastOutput));
  else
    easy_->compute(step_, 0.0, 0.0);  // warm-up bookkeeping; nothing to compare with yet
  cond.previousInput = x.clone();
  // The pair follows branch 0; a branch with no output to reuse yet makes the pair compute.
  for (const int b : callBranches_) compute = compute || !branch(b).residual.defined();
  for (const int b : callBranches_) branch(b).computeAt[step_] = compute;
  return !compute;
}

at::Tensor StepCache::reusedOutput(int index, const at::Tensor& x) const {
  return x + branches_.at(static_cast<std::size_t>(index)).residual;
}

void StepCache::outputComputed(int index, const at::Tensor& x, const at::Tensor& v) {
  if (!skipsWholeCalls()) return;
  Branch& b = branch(index);
  if (index == 0) {
    std::optional<double> outputChange, inputChange;
    if (b.lastOutput.defined()) outputChange = meanAbs(v - b.lastOutput);
    if (b.lastComputedInput.defined()) inputChange = meanAbs(x - b.lastComputedInput);
    easy_->computed(outputChange, inputChange);
    b.lastComputedInput = x.clone();
    b.lastOutput = v.clone();
  }
  b.residual = v - x;
  b.computeAt[step_] = true;
}

int StepCache::probeBlocks() const { return config_.record ? 0 : traitsOf(config_.policy).probeBlocks; }

bool StepCache::decide(Branch& b, int row, const models::BlockStackProbe& probe) {
  if (config_.record) {
    const at::Tensor modulation = probe.modulation[row];
    if (static_cast<int>(b.trace.modulationChange.size()) == step_)
      b.trace.modulationChange.push_back(b.previousModulation.defined() ? relativeL1(modulation, b.previousModulation)
                                                                        : 0.0);
    b.previousModulation = modulation.clone();
    b.pendingInput = probe.input[row];
    return true;
  }
  const bool noResidual = !b.residual.defined();
  switch (config_.policy) {
    case StepCachePolicy::TeaCache: {
      const at::Tensor modulation = probe.modulation[row];
      const double change = b.previousModulation.defined() ? relativeL1(modulation, b.previousModulation) : 0.0;
      b.previousModulation = modulation.clone();
      return b.tea->compute(step_, change) || noResidual;
    }
    case StepCachePolicy::MagCache:
      return b.mag->compute(step_) || noResidual;
    case StepCachePolicy::FirstBlock: {
      const at::Tensor first = probe.probeResidual[row];
      const bool compute =
          !b.lastProbe.defined() || noResidual || firstBlock_->compute(step_, relativeL1(first, b.lastProbe));
      if (compute) b.lastProbe = first.clone();
      return compute;
    }
    case StepCachePolicy::EasyCache:  // decided per call in the sampler
    case StepCachePolicy::Off:
      return true;
  }
  return true;
}

std::vector<bool> StepCache::skipRows(const models::BlockStackProbe& probe) {
  const auto rows = probe.input.size(0);
  if (rows != static_cast<std::int64_t>(callBranches_.size()))
    throw std::logic_error("StepCache: a forward of " + std::to_string(rows) + " rows for " +
                           std::to_string(callBranches_.size()) + " branches");
  std::vector<bool> skip;
  for (std::int64_t r = 0; r < rows; ++r) {
    Branch& b = branch(callBranches_[static_cast<std::size_t>(r)]);
    const auto known = b.computeAt.find(step_);
    const bool compute = known != b.computeAt.end() ? known->second : decide(b, static_cast<int>(r), probe);
    b.computeAt[step_] = compute;
    skip.push_back(!compute);
  }
  return skip;
}

at::Tensor StepCache::residual(std::int64_t row) const {
  return branches_.at(static_cast<std::size_t>(callBranches_.at(static_cast<std::size_t>(row)))).residual;
}

void StepCache::store(std::int64_t row, const at::Tensor& residual) {
  Branch& b = branch(callBranches_.at(static_cast<std::size_t>(row)));
  if (config_.record && static_cast<int>(b.trace.magnitudeRatio.size()) == step_) {
    b.trace.magnitudeRatio.push_back(
        b.residual.defined() ? (residual.norm(2, {-1}) / b.residual.norm(2, {-1})).mean().item<double>() : 1.0);
    const at::Tensor output = b.pendingInput + residual;
    b.trace.outputChange.push_back(b.lastOutput.defined() ? relativeL1(output, b.lastOutput) : 0.0);
    b.lastOutput = output;
  }
  b.residual = residual;
}

std::string StepCache::pattern(int index) const {
  const Branch& b = branches_.at(static_cast<std::size_t>(index));
  if (b.computeAt.empty()) return {};
  std::string out;
  for (int s = 0; s < config_.steps; ++s) {
    const auto found = b.computeAt.find(s);
    out += found == b.computeAt.end() ? '-' : found->second ? 'C' : 's';
  }
  return out;
}

int StepCache::computedPasses() const {
  int n = 0;
  for (const Branch& b : branches_)
    for (const auto& [step, compute] : b.computeAt) n += compute ? 1 : 0;
  return n;
}

int StepCache::skippedPasses() const {
  int n = 0;
  for (const Branch& b : branches_)
    for (const auto& [step, compute] : b.computeAt) n += compute ? 0 : 1;
  return n;
}

}  // namespace shotchain::sampling
