#pragma once

#include <cstdint>
#include <string>

#include "memory/memory_plan.h"
#include "memory/memory_planner.h"

namespace shotchain::memory {

// What each rank of a render spread over processes holds at the largest shot (docs/distributed.md):
// `sequenceRanks` ranks split the tokens (Ulysses) in each of `guidanceRanks` (1 or 2) groups.
struct RankPlan {
  int ranks = 1;
  int sequenceRanks = 1;
  int guidanceRanks = 1;
  std::int64_t tokens = 0;          // one sample of the largest shot
  std::int64_t tokensPerRank = 0;   // padded to a multiple of sequenceRanks, divided
  std::int64_t batchPerRank = 1;    // samples per forward on a rank
  std::uint64_t weights = 0;        // every rank holds the whole DiT (rank 0 also the VAE, decoding)
  std::uint64_t activations = 0;    // the DiT forward's peak, scaled to the rank's tokens and batch
  std::uint64_t communication = 0;  // all-to-all send and receive buffers of one block, and the output gather
  std::uint64_t bytesPerLayer = 0;  // sent by one rank per block and step (the four all-to-alls)
  std::uint64_t bytesPerStep = 0;   // sent by one rank per sampling step (every block, the gathers)
  std::string refusal;              // why the model cannot be split this way; empty when it can
};

// From the plan request of `shotchain plan` and its plan. ranks ≥ 1; guidanceParallel needs an even count.
RankPlan planPerRank(const PlanRequest& request, const MemoryPlan& plan, int ranks, bool guidanceParallel);

std::string formatRankPlan(const RankPlan& plan);
std::string rankPlanToJson(const RankPlan& plan);

}  // namespace shotchain::memory
