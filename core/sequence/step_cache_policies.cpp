#include "sequence/step_cache_policies.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace shotchain {
namespace {

constexpr unsigned kAll =
    kCacheNotWithStream | kCacheNotWithFewStep | kCacheNotWithTwoExperts | kCacheNotWithStagger | kCacheNotOverRanks;

// Thresholds and warm-up shares as the sources publish them: TeaCache4Wan2.1 (use_ret_steps: 5 of 50 steps;
// 0.2, "fast" on 14B), MagCache4Wan2.1 (retention_ratio 0.2, magcache_thresh 0.12), EasyCache4Wan2.1 (ret_steps
// 10 of 50, thresh 0.05), ParaAttention's First-Block Cache.
//   policy                       name           description
//   threshold warm-up wholeCalls probe residuals calibration online source                       limits  bench thresholds
constexpr std::array<StepCachePolicyTraits, 5> kCachePolicyRows{{
    {StepCachePolicy::Off,
     "off",
     "off — every step computed",
     0.0,
     0.0,
     false,
     0,
     0,
     CalibrationNeed::Online,
     "",
     0,
     {0, 0, 0}},
    {StepCachePolicy::TeaCache,
     "teacache",
     "teacache — skip while the timestep modulation barely changes",
     0.2,
     0.1,
     false,
     0,
     1,
     CalibrationNeed::Optional,
     "uncalibrated: relative change of the modulation",
     kAll,
     {0.1, 0.2, 0.4}},
    {StepCachePolicy::MagCache,
     "magcache",
     "magcache — skip while the residual's magnitude ratio stays near 1",
     0.12,
     0.2,
     false,
     0,
     1,
     CalibrationNeed::Required,
     "",
     kAll,
     {0.06, 0.12, 0.24}},
    {StepCachePolicy::EasyCache,
     "easycache",
     "easycache — skip whole steps the transformation rate predicts",
     0.05,
     0.2,
     true,
     0,
     0,
     CalibrationNeed::Online,
     "online: transformation rate",
     kAll,
     {0.025, 0.05, 0.1}},
    {StepCachePolicy::FirstBlock,
     "first_block",
     "first_block — skip while the first block's residual barely changes",
     0.05,
     0.1,
     false,
     1,
     2,
     CalibrationNeed::Online,
     "online: first block's residual",
     kAll,
     {0.05, 0.1, 0.2}},
}};

}  // namespace

std::span<const StepCachePolicyTraits> stepCachePolicies() { return kCachePolicyRows; }

const StepCachePolicyTraits& traitsOf(StepCachePolicy policy) {
  for (const StepCachePolicyTraits& traits : kCachePolicyRows)
    if (traits.policy == policy) return traits;
  throw std::logic_error("step-cache policy without a row in the traits table");
}

std::string stepCachePolicyNames() {
  std::string names;
  for (const StepCachePolicyTraits& traits : kCachePolicyRows)
    names += (names.empty() ? "" : ", ") + std::string(traits.name);
  return names;
}

int warmupSteps(const StepCachePolicyTraits& traits, int steps) {
  return std::max(1, static_cast<int>(std::lround(traits.warmupShare * steps)));
}

}  // namespace shotchain
