#include "memory/rank_plan.h"

#include <algorithm>
#include <cstdio>

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include "util/byte_size.h"

namespace shotchain::memory {

RankPlan planPerRank(const PlanRequest& request, const MemoryPlan& plan, int ranks, bool guidanceParallel) {
  RankPlan r;
  r.ranks = std::max(1, ranks);
  r.guidanceRanks = guidanceParallel && r.ranks % 2 == 0 ? 2 : 1;
  r.sequenceRanks = r.ranks / r.guidanceRanks;
  if (guidanceParallel && r.guidanceRanks == 1) r.refusal = "guidance in parallel needs an even number of ranks";
  const models::DitMemoryModel& dit = *request.dit;
  if (dit.heads() % r.sequenceRanks != 0)
    r.refusal =
        std::to_string(dit.heads()) + " heads do not divide by " + std::to_string(r.sequenceRanks) + " sequence ranks";
  models::LatentShape largest;
  std::uint64_t latentElements = 0;
  for (const PlanShot& shot : request.shots) {
    const models::LatentShape latent{shot.channels, shot.frames, shot.height, shot.width};
    if (dit.tokens(latent) > r.tokens) {
      r.tokens = dit.tokens(latent);
      largest = latent;
      latentElements = static_cast<std::uint64_t>(shot.channels * shot.frames * shot.height * shot.width);
    }
  }
  const std::int64_t batch = plan.splitGuidance ? 1 : request.cfgBatch;
  r.batchPerRank = std::max<std::int64_t>(1, batch / r.guidanceRanks);
  const std::int64_t padded = (r.tokens + r.sequenceRanks - 1) / r.sequenceRanks * r.sequenceRanks;
  r.tokensPerRank = padded / r.sequenceRanks;
  r.weights = plan.ditWeights;
  const auto s = static_cast<std::uint64_t>(r.sequenceRanks), b = static_cast<std::uint64_t>(r.batchPerRank);
  r.activations = r.tokens > 0 ? dit.activationBytes(request.ditDtype, r.batchPerRank, largest) / s : 0;
  const std::uint64_t shard = b * static_cast<std::uint64_t>(r.tokensPerRank) *
                              static_cast<std::uint64_t>(dit.hiddenSize()) * c10::elementSize(request.ditDtype);
  const std::uint64_t output = b * latentElements * 4;  // the velocity, float32, gathered on every rank
  if (r.sequenceRanks > 1) {
    r.communication = 2 * 3 * shard + 2 * shard + output;  // q, k, v out and in; the attention result back
    r.bytesPerLayer = 4 * shard * (s - 1) / s;
    r.bytesPerStep = r.bytesPerLayer * static_cast<std::uint64_t>(dit.layers()) + output / s * (s - 1);
  }
  if (r.guidanceRanks > 1) {
    r.communication += 2 * output;
    r.bytesPerStep += output;  // each side sends its prediction to the other
  }
  return r;
}

std::string formatRankPlan(const RankPlan& r) {
  std::string text = "per rank over " + std::to_string(r.ranks) + " ranks (" + std::to_string(r.sequenceRanks) +
                     " sequence x " + std::to_string(r.guidanceRanks) + " guidance):\n";
  if (!r.refusal.empty()) return text + "  cannot split: " + r.refusal + "\n";
  auto line = [&](const char* name, std::uint64_t bytes, const std::string& detail) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "  %-22s %12s  %s\n", name, util::formatByteSize(bytes).c_str(),
                  detail.c_str());
    text += buffer;
  };
  line("dit weights", r.weights, "the whole DiT on every rank");
  line("dit activations", r.activations,
       std::to_string(r.tokensPerRank) + " of " + std::to_string(r.tokens) + " tokens, batch " +
           std::to_string(r.batchPerRank));
  line("communication buffers", r.communication, "all-to-all in and out of one block, the gathered output");
  line("sent per layer", r.bytesPerLayer, "q, k, v to heads and the attention back");
  line("sent per step", r.bytesPerStep, "every layer, the token gather and the guidance exchange");
  return text;
}

std::string rankPlanToJson(const RankPlan& r) {
  nlohmann::json json{{"ranks", r.ranks},
                      {"sequence_ranks", r.sequenceRanks},
                      {"guidance_ranks", r.guidanceRanks},
                      {"tokens", r.tokens},
                      {"tokens_per_rank", r.tokensPerRank},
                      {"batch_per_rank", r.batchPerRank},
                      {"dit_weights", r.weights},
                      {"dit_activations", r.activations},
                      {"communication_buffers", r.communication},
                      {"bytes_per_layer", r.bytesPerLayer},
                      {"bytes_per_step", r.bytesPerStep}};
  if (!r.refusal.empty()) json["refusal"] = r.refusal;
  return json.dump(2);
}

}  // namespace shotchain::memory
