#include "sampling/step_cache_rules.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace shotchain::sampling {
namespace {

bool alwaysComputed(int step, int warmup, int steps) { return step < warmup || step >= steps - 1; }

// MagCache4Wan2.1/magcache_generate.py, the T2V tables (the two leading 1.0 are the padding of step 0).
const std::vector<double> kMagRatios14B{
    1.0, 1.0,
    1.02504, 1.03017, 1.00025, 1.00251, 0.9985, 0.99962, 0.99779, 0.99771,
    0.9966, 0.99658, 0.99482, 0.99476, 0.99467, 0.99451, 0.99664, 0.99656,
    0.99434, 0.99431, 0.99533, 0.99545, 0.99468, 0.99465, 0.99438, 0.99434,
    0.99516, 0.99517, 0.99384, 0.9938, 0.99404, 0.99401, 0.99517, 0.99516,
    0.99409, 0.99408, 0.99428, 0.99426, 0.99347, 0.99343, 0.99418, 0.99416,
    0.99271, 0.99269, 0.99313, 0.99311, 0.99215, 0.99215, 0.99218, 0.99215,
    0.99216, 0.99217, 0.99163, 0.99161, 0.99138, 0.99135, 0.98982, 0.9898,
    0.98996, 0.98995, 0.9887, 0.98866, 0.98772, 0.9877, 0.98767, 0.98765,
    0.98573, 0.9857, 0.98501, 0.98498, 0.9838, 0.98376, 0.98177, 0.98173,
    0.98037, 0.98035, 0.97678, 0.97677, 0.97546, 0.97543, 0.97184, 0.97183,
    0.96711, 0.96708, 0.96349, 0.96345, 0.95629, 0.95625, 0.94926, 0.94929,
    0.93964, 0.93961, 0.92511, 0.92504, 0.90693, 0.90678, 0.8796, 0.87945,
    0.86111, 0.86189};
const std::vector<double> kMagRatios1_3B{
    1.0, 1.0,
    1.0124, 1.02213, 1.00166, 1.0041, 0.99791, 1.00061, 0.99682, 0.99762,
    0.99634, 0.99685, 0.99567, 0.99586, 0.99416, 0.99422, 0.99578, 0.99575,
    0.9957, 0.99563, 0.99511, 0.99506, 0.99535, 0.99531, 0.99552, 0.99549,
    0.99541, 0.99539, 0.9954, 0.99536, 0.99489, 0.99485, 0.99518, 0.99514,
    0.99484, 0.99478, 0.99481, 0.99479, 0.99415, 0.99413, 0.99419, 0.99416,
    0.99396, 0.99393, 0.99388, 0.99386, 0.99349, 0.99349, 0.99309, 0.99304,
    0.9927, 0.9927, 0.99228, 0.99226, 0.99171, 0.9917, 0.99137, 0.99135,
    0.99068, 0.99063, 0.99005, 0.99003, 0.98944, 0.98942, 0.98849, 0.98849,
    0.98758, 0.98757, 0.98644, 0.98643, 0.98504, 0.98503, 0.9836, 0.98359,
    0.98202, 0.98201, 0.97977, 0.97978, 0.97717, 0.97718, 0.9741, 0.97411,
    0.97003, 0.97002, 0.96538, 0.96541, 0.9593, 0.95933, 0.95086, 0.95089,
    0.94013, 0.94019, 0.92402, 0.92414, 0.90241, 0.9026, 0.86821, 0.86868,
    0.81838, 0.81939};

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
  for (int i = 0; i < length; ++i) out.push_back(source[static_cast<std::size_t>(std::nearbyint(i * scale))]);  // numpy rounds half to even
  return out;
}

int warmupSteps(double share, int steps) { return std::max(1, static_cast<int>(std::lround(share * steps))); }

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

EasyCacheRule::EasyCacheRule(double threshold, int warmup, int steps) : threshold_(threshold), warmup_(warmup), steps_(steps) {}

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

FirstBlockRule::FirstBlockRule(double threshold, int warmup, int steps) : threshold_(threshold), warmup_(warmup), steps_(steps) {}

bool FirstBlockRule::compute(int step, double relativeChange) const {
  return alwaysComputed(step, warmup_, steps_) || !(relativeChange < threshold_);
}

PublishedVariant publishedVariantOf(const std::string& family) {
  if (family == "Wan 2.1 T2V, 1.3B") return PublishedVariant::Wan21T2V1_3B;
  if (family == "Wan 2.1 T2V, 14B") return PublishedVariant::Wan21T2V14B;
  return PublishedVariant::None;
}

std::vector<double> publishedTeaCacheCoefficients(PublishedVariant variant) {
  // TeaCache4Wan2.1/teacache_generate.py, use_ret_steps, t2v.
  switch (variant) {
    case PublishedVariant::Wan21T2V1_3B: return {-5.21862437e+04, 9.23041404e+03, -5.28275948e+02, 1.36987616e+01, -4.99875664e-02};
    case PublishedVariant::Wan21T2V14B: return {-3.03318725e+05, 4.90537029e+04, -2.65530556e+03, 5.87365115e+01, -3.15583525e-01};
    case PublishedVariant::None: break;
  }
  return {};
}

std::vector<double> publishedMagCacheRatios(PublishedVariant variant) {
  switch (variant) {
    case PublishedVariant::Wan21T2V1_3B: return kMagRatios1_3B;
    case PublishedVariant::Wan21T2V14B: return kMagRatios14B;
    case PublishedVariant::None: break;
  }
  return {};
}

std::vector<double> branchRatios(const std::vector<double>& interleaved, int branch, int steps) {
  if (interleaved.size() < 2 || interleaved.size() % 2 != 0 || branch < 0 || branch > 1)
    throw std::invalid_argument("MagCache ratios: an even number of interleaved entries, branch 0 or 1");
  std::vector<double> own;
  for (std::size_t i = static_cast<std::size_t>(branch); i < interleaved.size(); i += 2) own.push_back(interleaved[i]);
  return static_cast<int>(own.size()) == steps ? own : nearestInterpolation(own, steps);
}

}  // namespace shotchain::sampling
