#include "sampling/step_cache_rules.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace shotchain::sampling {
namespace {

bool alwaysComputed(int step, int warmup, int steps) { return step < warmup || step >= steps - 1; }

}  // namespace

double evaluatePolynomial(const std::vector<double>& coefficients, double x) {
  double value = 0;
  for (const double c : coefficients) value = value * x + c;
  return value;
}

std::vector<double> nearestInterpolation(const std::vector<double>& source, int length) {
  if (source.empty() || length < 1) throw std::invalid_argument("nearestInterpolation: empty table or length");
  if (length == 1) return {source.back()};
  const double scale = static_cast<double>(source.size() - 1) / (length - 1);
  std::vector<double> out;
  for (int i = 0; i < length; ++i)
    out.push_back(source[static_cast<std::size_t>(std::nearbyint(i * scale))]);  // numpy rounds half to even
  return out;
}

TeaCacheRule::TeaCacheRule(std::vector<double> coefficients, double threshold, int warmup, int steps)
    : coefficients_(std::move(coefficients)), threshold_(threshold), warmup_(warmup), steps_(steps) {}

double TeaCacheRule::rescaled(double relativeL1) const {
  return coefficients_.empty() ? relativeL1 : evaluatePolynomial(coefficients_, relativeL1);
}

bool TeaCacheRule::compute(int step, double relativeL1) {
  if (alwaysComputed(step, warmup_, steps_)) {
    accumulated_ = 0;
    return true;
  }
  accumulated_ += rescaled(relativeL1);
  if (accumulated_ < threshold_) return false;
  accumulated_ = 0;
  return true;
}

MagCacheRule::MagCacheRule(std::vector<double> ratios, double threshold, int maxSkips, int warmup)
    : ratios_(std::move(ratios)), threshold_(threshold), maxSkips_(maxSkips), warmup_(warmup) {}

bool MagCacheRule::compute(int step) {
  const auto steps = static_cast<int>(ratios_.size());
  if (alwaysComputed(step, warmup_, steps)) {
    ratio_ = 1.0;
    error_ = 0.0;
    skipped_ = 0;
    return true;
  }
  ratio_ *= ratios_[static_cast<std::size_t>(step)];
  ++skipped_;
  error_ += std::abs(1.0 - ratio_);
  if (error_ < threshold_ && skipped_ <= maxSkips_) return false;
  ratio_ = 1.0;
  error_ = 0.0;
  skipped_ = 0;
  return true;
}

EasyCacheRule::EasyCacheRule(double threshold, int warmup, int steps)
    : threshold_(threshold), warmup_(warmup), steps_(steps) {}

bool EasyCacheRule::compute(int step, double inputChange, double outputMagnitude) {
  if (alwaysComputed(step, warmup_, steps_)) {
    accumulated_ = 0;
    return true;
  }
  if (!rate_ || outputMagnitude <= 0) return true;
  accumulated_ += *rate_ * (inputChange / outputMagnitude);
  if (accumulated_ < threshold_) return false;
  accumulated_ = 0;
  return true;
}

void EasyCacheRule::computed(std::optional<double> outputChange, std::optional<double> inputChange) {
  if (outputChange && inputChange && *inputChange > 0) rate_ = *outputChange / *inputChange;
}

FirstBlockRule::FirstBlockRule(double threshold, int warmup, int steps)
    : threshold_(threshold), warmup_(warmup), steps_(steps) {}

bool FirstBlockRule::compute(int step, double relativeChange) const {
  return alwaysComputed(step, warmup_, steps_) || !(relativeChange < threshold_);
}

std::vector<double> branchRatios(const std::vector<double>& interleaved, int branch, int steps) {
  if (interleaved.size() < 2 || interleaved.size() % 2 != 0 || branch < 0 || branch > 1)
    throw std::invalid_argument("MagCache ratios: an even number of interleaved entries, branch 0 or 1");
  std::vector<double> own;
  for (std::size_t i = static_cast<std::size_t>(branch); i < interleaved.size(); i += 2) own.push_back(interleaved[i]);
  return static_cast<int>(own.size()) == steps ? own : nearestInterpolation(own, steps);
}

}  // namespace shotchain::sampling
