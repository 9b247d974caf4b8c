#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

#include "memory/memory_plan.h"
#include "models/model_memory.h"
#include "sequence/sequence.h"

namespace shotchain::memory {

// One shot's latent as the DiT samples it: [channels, frames, height, width], frames including
// the overlap frames taken from the previous shot.
struct PlanShot {
  std::int64_t channels = 16;
  std::int64_t frames = 1;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t decodePrefixFrames = 0;  // latent frames decoded ahead of the shot (`latent` continuity)
  // Its step cache (docs/step-cache.md): float32 [tokens, hidden] tensors kept per guidance branch
  // (teacache and magcache: the block stack's residual; first_block: and block 0's), for `branches`.
  int stepCacheTensors = 0;
  int branches = 2;
  // Its LoRAs: elements of the weights they patch (a patched copy beside each kept base weight, in the
  // DiT's dtype; kept across pinned shots).
  std::uint64_t loraElements = 0;
  // Two experts: the runs of its steps in order (1 high noise, 0 low noise), e.g. {1, 0}.
  std::vector<int> expertRuns = {};
};

struct PlanRequest {
  std::shared_ptr<const models::DitMemoryModel> dit;
  c10::ScalarType ditDtype = c10::kBFloat16;  // matmul weights; norms and the head stay float32
  // Two experts: the high-noise one (resident for the whole render; `dit` is the low-noise one). Null: one DiT.
  std::shared_ptr<const models::DitMemoryModel> ditHighNoise;
  c10::ScalarType ditHighNoiseDtype = c10::kBFloat16;
  ExpertResidency experts = ExpertResidency::Auto;  // what the document asks (memory.experts)
  bool highNoiseResident = true;                    // set by the planner for each placement it tries
  std::shared_ptr<const models::VaeMemoryModel> vae;
  c10::ScalarType vaeDtype = c10::kFloat;
  std::uint64_t textEncoderWeights = 0;
  std::uint64_t textEncoderActivations = 0;
  // A DiT that attends to CLIP features: the image encoder, loaded for each shot's pictures beside the resident DiT.
  std::uint64_t imageEncoderWeights = 0;
  std::uint64_t imageEncoderActivations = 0;
  std::vector<PlanShot> shots;
  int cfgBatch = 2;  // classifier-free guidance as one batch-2 forward
  std::uint64_t ringBufferBytes = 0;
  bool decodeWholeClip = true;  // the decode keeps the shot's frames as one tensor
  std::string device = "cpu";
  std::uint64_t deviceTotal = 0;
  std::optional<std::uint64_t> budget;
  std::optional<std::uint64_t> margin;  // default: 5% of the limit, at most 1 GiB
  ResidencyPolicy policy = ResidencyPolicy::Auto;
  bool handsOff =
      false;  // an enabled shot continues from the one before (latent, latent_overlap, blend, vae_roundtrip)
  // Stream shots: the KV cache stays on the device from shot to shot. Its largest size is
  // kvCacheBytesPerFrame × (chunk sink + window + one chunk being committed).
  std::uint64_t kvCacheBytesPerFrame = 0;  // 0: no stream shot
  std::int64_t streamChunk = 0;
  std::int64_t streamWindow = 0;  // latent frames, whole chunks
  int streamBranches = 0;
};

// Fills every MemoryPlan field. auto: pinned if it fits, else pinned with a tiled decode, else
// offload (full, then tiled decode); a requested policy that does not fit gives fits = false and
// a reason naming the policy that would. When nothing fits with guidance as one batch-2 call, the
// same ladder is tried with two batch-1 calls per step (splitGuidance, about twice the sampling time).
MemoryPlan planMemory(const PlanRequest& request);

// An aligned table for people (sizes as "1.5 GiB") and a JSON object for tools.
std::string formatPlan(const MemoryPlan& plan);
std::string planToJson(const MemoryPlan& plan);

}  // namespace shotchain::memory
