#include "resolve/plan_request.h"

#include <algorithm>
#include <map>

#include "memory/device_memory.h"
#include "models/model_memory.h"

namespace shotchain::resolve {

memory::PlanRequest planRequest(const ResolvedSequence& resolved, const SequenceSettings& settings,
                                const PlanTarget& target) {
  const models::ModelFiles& files = resolved.models.files;
  memory::PlanRequest r;
  r.dit = models::ditMemoryModel(files.dit);
  r.ditDtype = r.dit->loadDtype();
  if (!files.ditHighNoise.empty()) {
    r.ditHighNoise = models::ditMemoryModel(files.ditHighNoise);
    r.ditHighNoiseDtype = r.ditHighNoise->loadDtype();
    r.experts = settings.experts;
  }
  r.vae = models::vaeMemoryModel(files.vae);
  r.vaeDtype = c10::kFloat;  // the VAE runs in float32 (its loaders' default)
  const models::EncoderMemory text = models::textEncoderMemory(files.textEncoder);
  r.textEncoderWeights = text.weightBytes;
  r.textEncoderActivations = text.activationBytes;
  if (resolved.models.dit.imageEmbeddingTokens > 0 && !files.imageEncoder.empty()) {
    const models::EncoderMemory image = models::imageEncoderMemory(files.imageEncoder);
    r.imageEncoderWeights = image.weightBytes;
    r.imageEncoderActivations = image.activationBytes;
  }

  std::map<std::string, std::uint64_t> ringSlots;  // tag → bytes of the handoff kept for it
  r.streamChunk = std::max<std::int64_t>(1, resolved.models.dit.causalBlockSize);
  r.streamWindow = (resolved.streamWindow + r.streamChunk - 1) / r.streamChunk * r.streamChunk;
  for (const ResolvedShot& shot : resolved.shots) {
    if (!shot.enabled) continue;
    memory::PlanShot& s = r.shots.emplace_back();
    s.channels = shot.latentChannels;
    s.frames = shot.sampledLatentFrames;
    s.decodePrefixFrames = shot.continuity.decodePrefixLatents;
    s.height = shot.latentHeight;
    s.width = shot.latentWidth;
    s.branches = shot.branches;
    s.stepCacheTensors = shot.cache.applies ? shot.cache.residualTensors : 0;
    for (const ResolvedLora& lora : shot.loras) s.loraElements += lora.patchedElements;
    if (shot.experts) s.expertRuns = shot.experts->runs;
    r.handsOff = r.handsOff || shot.predecessor >= 0;
    const auto frames = static_cast<std::uint64_t>(std::max(1, shot.continuity.handedTailLatents));
    auto& slot = ringSlots[shot.settings.tag];
    slot = std::max(slot, frames * static_cast<std::uint64_t>(s.channels * s.height * s.width) * 4);
    if (shot.sampling != SamplingKind::KvStream) continue;
    r.streamBranches = std::max(r.streamBranches, shot.branches);
    r.kvCacheBytesPerFrame =
        std::max(r.kvCacheBytesPerFrame,
                 r.dit->kvCacheBytesPerFrame(r.ditDtype, shot.branches, shot.latentHeight, shot.latentWidth));
  }
  for (const auto& [tag, bytes] : ringSlots) r.ringBufferBytes += bytes;

  r.device = target.device;
  r.deviceTotal = target.deviceTotal ? *target.deviceTotal : memory::deviceTotalBytes(target.device);
  r.budget = target.budget ? target.budget : settings.memoryBudgetBytes;
  r.policy = target.policy ? *target.policy : settings.policy;
  return r;
}

}  // namespace shotchain::resolve
