#pragma once

// Everything the product knows about one step-cache policy (docs/step-cache.md), in one row: the
// document I/O, the resolver (whether it runs for a shot and with which numbers), the memory plan, the
// sampler's cache and the inspectors read it here. A new policy is a new row (and its rule in
// sampling/step_cache.cpp, which decides step by step).
#include <array>
#include <span>

#include "sequence/sequence.h"

namespace shotchain {

// Where a policy's numbers come from.
enum class CalibrationNeed {
  Online,    // measured while it samples (nothing to calibrate)
  Optional,  // a calibrate-cache file, else the DiT variant's published table, else an uncalibrated signal
  Required,  // a calibrate-cache file or the DiT variant's published table; without either it is off
};

// What a cached step cannot run with (every policy alike today; a row may differ).
enum CacheLimit : unsigned {
  kCacheNotWithStream = 1u << 0,      // stream shots: a few steps per chunk over a KV cache
  kCacheNotWithFewStep = 1u << 1,     // a few-step schedule computes every step
  kCacheNotWithTwoExperts = 1u << 2,  // one expert's residual says nothing of the other's
  kCacheNotWithStagger = 1u << 3,     // sampler.ar_step: the frames on staggered schedules
  kCacheNotOverRanks = 1u << 4,       // the DiT spread over ranks: each would decide on its own part of the batch
};

struct StepCachePolicyTraits {
  StepCachePolicy policy;
  const char* name;         // the document's spelling
  const char* description;  // the inspector's line for it
  double defaultThreshold;  // as its source publishes it
  double warmupShare;       // share of the steps always computed first (rounded, at least 1)
  bool skipsWholeCalls;     // decides on the model's input and skips whole model calls (else the DiT's block stack)
  int probeBlocks;          // blocks that always run before it decides
  int residualTensors;      // float32 [tokens, hidden] tensors kept per guidance branch (the memory plan's)
  CalibrationNeed calibration;
  const char* onlineSource;               // where its numbers come from when nothing is calibrated or published
  unsigned cannotRunWith;                 // CacheLimit flags
  std::array<double, 3> benchThresholds;  // `bench cache`: three thresholds around the default
};

// Every policy, "off" first, in the order the inspectors list them.
std::span<const StepCachePolicyTraits> stepCachePolicies();
const StepCachePolicyTraits& traitsOf(StepCachePolicy policy);
// "off, teacache, …": every policy's spelling, in the table's order (for messages).
std::string stepCachePolicyNames();
// The steps always computed first: the share of `steps`, rounded, at least 1.
int warmupSteps(const StepCachePolicyTraits& traits, int steps);

}  // namespace shotchain
