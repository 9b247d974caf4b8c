#include <algorithm>
#include <map>
#include <stdexcept>

#include "sequence/continuity_modes.h"
#include "io/weight_set.h"
#include "memory/device_memory.h"
#include "memory/memory_planner.h"
#include "models/model_files.h"
#include "models/umt5.h"

namespace shotchain {
namespace {

// The load dtype of a model's matmuls from the stored dtype of one of them, as the loaders choose it.
c10::ScalarType matmulDtype(const io::WeightInfo* probe, bool halfStaysHalf) {
  if (!probe) return c10::kFloat;
  switch (probe->dtype) {
    case io::DType::F16: return halfStaysHalf ? c10::kHalf : c10::kBFloat16;
    case io::DType::BF16:
    case io::DType::F8_E4M3:
    case io::DType::F8_E5M2: return c10::kBFloat16;
    case io::DType::F64: return c10::kDouble;
    default: return c10::kFloat;
  }
}

void requireNoProblems(const io::WeightSet& weights, const std::string& what, bool is,
                       const std::vector<std::string>& problems) {
  if (!is) throw std::runtime_error(weights.label() + ": not " + what);
  if (!problems.empty()) throw std::runtime_error(weights.label() + ": " + problems.front());
}

}  // namespace

PlanRequest planRequestFromFiles(const models::ModelFiles& files, const Sequence& sequence, const std::string& device,
                                 std::optional<std::uint64_t> budget, std::optional<ResidencyPolicy> policy) {
  PlanRequest r;
  {
    const io::WeightSet weights = io::WeightSet::open(files.dit);
    const models::WanDetection d = models::detectWanConfig(weights);
    requireNoProblems(weights, "a Wan 2.1 DiT", d.isWanDit, d.problems);
    r.dit = d.config;
    r.ditDtype = matmulDtype(weights.find("blocks.0.ffn.0.weight"), true);
  }
  {
    const io::WeightSet weights = io::WeightSet::open(files.vae);
    const models::WanVaeDetection d = models::detectWanVaeConfig(weights);
    requireNoProblems(weights, "a Wan 2.1 VAE", d.isWanVae, d.problems);
    r.vae = d.config;
    r.vaeDtype = c10::kFloat;  // the VAE runs in float32 (WanVaeLoadOptions)
  }
  {
    const io::WeightSet weights = io::WeightSet::open(files.textEncoder);
    const models::Umt5Detection d = models::detectUmt5Config(weights);
    requireNoProblems(weights, "a UMT5 text encoder", d.isUmt5, d.problems);
    const models::Umt5Config& c = d.config;
    const io::WeightInfo* probe = weights.find(models::umt5StoredName("blocks.0.ffn.fc1.weight", d.naming));
    const std::uint64_t s = c10::elementSize(matmulDtype(probe, false));
    const auto dim = static_cast<std::uint64_t>(c.dim), ffn = static_cast<std::uint64_t>(c.dimFfn),
               heads = static_cast<std::uint64_t>(c.numHeads), layers = static_cast<std::uint64_t>(c.numLayers);
    const std::uint64_t f32 = layers * (2 * dim + static_cast<std::uint64_t>(c.numBuckets) * heads) + dim;
    r.textEncoderWeights = (c.parameterCount() - f32) * s + f32 * 4;
    const std::uint64_t len = 512;  // one prompt at the full text length
    r.textEncoderActivations = len * (6 * 4 * dim + 3 * s * ffn) + 3 * 4 * heads * len * len;
  }

  std::map<std::string, std::uint64_t> ringSlots;  // tag → bytes of the handoff kept for it
  const std::int64_t spatial = r.vae.spatialFactor();
  for (const Shot& shot : sequence.shots) {
    if (!shot.enabled) continue;
    PlanShot s;
    s.channels = r.dit.inDim;
    const ContinuityGeometry geometry = continuityGeometry(shot.continuity);
    s.frames = shot.latentFrames() + geometry.extraLatents;
    s.decodePrefixFrames = geometry.decodePrefixLatents;
    s.height = shot.height / spatial;
    s.width = shot.width / spatial;
    r.shots.push_back(s);
    r.handsOff = r.handsOff || usesHandoff(shot.continuity.mode);
    const auto frames = static_cast<std::uint64_t>(std::max(1, geometry.handedTailLatents));
    auto& slot = ringSlots[shot.continuity.tag];
    slot = std::max(slot, frames * static_cast<std::uint64_t>(s.channels * s.height * s.width) * 4);
  }
  for (const auto& [tag, bytes] : ringSlots) r.ringBufferBytes += bytes;

  r.device = device;
  r.deviceTotal = deviceTotalBytes(device);
  r.budget = budget ? budget : sequence.settings.memoryBudgetBytes;
  r.policy = policy ? *policy : sequence.settings.policy;
  return r;
}

}  // namespace shotchain
