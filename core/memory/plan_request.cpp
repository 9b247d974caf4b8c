#include <algorithm>
#include <map>
#include <stdexcept>

#include "memory/device_memory.h"
#include "memory/memory_planner.h"
#include "models/model_files.h"
#include "models/lora/lora_file.h"
#include "models/model_memory.h"
#include "sequence/continuity_modes.h"

namespace shotchain {

PlanRequest planRequestFromFiles(const models::ModelFiles& files, const Sequence& sequence, const std::string& device,
                                 std::optional<std::uint64_t> budget, std::optional<ResidencyPolicy> policy,
                                 std::optional<std::uint64_t> deviceTotal) {
  PlanRequest r;
  r.dit = models::ditMemoryModel(files.dit);
  r.ditDtype = r.dit->loadDtype();
  if (!files.ditHighNoise.empty()) {
    r.ditHighNoise = models::ditMemoryModel(files.ditHighNoise);
    r.ditHighNoiseDtype = r.ditHighNoise->loadDtype();
    r.experts = sequence.settings.experts;
  }
  r.vae = models::vaeMemoryModel(files.vae);
  r.vaeDtype = c10::kFloat;  // the VAE runs in float32 (its loaders' default)
  const models::TextEncoderMemory text = models::textEncoderMemory(files.textEncoder);
  r.textEncoderWeights = text.weightBytes;
  r.textEncoderActivations = text.activationBytes;

  std::map<std::string, std::uint64_t> ringSlots;  // tag → bytes of the handoff kept for it
  const std::int64_t spatial = r.vae->geometry().spatialFactor;
  for (const Shot& shot : sequence.shots) {
    if (!shot.enabled) continue;
    PlanShot s;
    s.channels = r.dit->latentChannels();
    const ContinuityGeometry geometry = continuityGeometry(shot.continuity);
    s.frames = shot.latentFrames() + geometry.extraLatents;
    s.decodePrefixFrames = geometry.decodePrefixLatents;
    s.height = shot.height / spatial;
    s.width = shot.width / spatial;
    s.branches = shot.guidance.value_or(sequence.settings.sampler.guidance) == 1.0 ? 1 : 2;
    const StepCachePolicy cache = (shot.cache ? *shot.cache : sequence.settings.sampler.cache).policy;
    if (!streams(shot.continuity.mode))
      s.stepCacheTensors = cache == StepCachePolicy::FirstBlock                                   ? 2
                           : cache == StepCachePolicy::TeaCache || cache == StepCachePolicy::MagCache ? 1
                                                                                                  : 0;
    r.shots.push_back(s);
    r.handsOff = r.handsOff || usesHandoff(shot.continuity.mode);
    const auto frames = static_cast<std::uint64_t>(std::max(1, geometry.handedTailLatents));
    auto& slot = ringSlots[shot.continuity.tag];
    slot = std::max(slot, frames * static_cast<std::uint64_t>(s.channels * s.height * s.width) * 4);
  }
  for (const auto& [tag, bytes] : ringSlots) r.ringBufferBytes += bytes;
  r.streamChunk = std::max<std::int64_t>(1, r.dit->causalBlockSize());
  const std::int64_t window = sequence.settings.sampler.streamWindow.value_or(kDefaultStreamWindow);
  r.streamWindow = (window + r.streamChunk - 1) / r.streamChunk * r.streamChunk;
  for (const Shot& shot : sequence.shots) {
    if (!shot.enabled || !streams(shot.continuity.mode)) continue;
    const int branches = shot.guidance.value_or(sequence.settings.sampler.guidance) == 1.0 ? 1 : 2;
    r.streamBranches = std::max(r.streamBranches, branches);
    r.kvCacheBytesPerFrame = std::max(r.kvCacheBytesPerFrame,
                                      r.dit->kvCacheBytesPerFrame(r.ditDtype, branches, shot.height / spatial, shot.width / spatial));
  }

  r.device = device;
  r.deviceTotal = deviceTotal ? *deviceTotal : deviceTotalBytes(device);
  r.budget = budget ? budget : sequence.settings.memoryBudgetBytes;
  r.policy = policy ? *policy : sequence.settings.policy;
  return r;
}

void addLoraPatches(PlanRequest& request, const Sequence& sequence, const std::filesystem::path& sequenceDirectory) {
  std::map<std::string, std::uint64_t> elements;  // file → elements it patches
  std::size_t planned = 0;
  for (const Shot& shot : sequence.shots) {
    if (!shot.enabled) continue;
    std::uint64_t total = 0;
    for (const LoraRef& lora : shot.loras ? *shot.loras : sequence.settings.loras) {
      const std::filesystem::path file(lora.file);
      const std::string path = (file.is_absolute() ? file : sequenceDirectory / file).string();
      auto found = elements.find(path);
      if (found == elements.end()) {
        std::uint64_t count = 0;
        try {
          count = models::loraPatchedElements(path);
        } catch (const std::exception&) {
        }
        found = elements.emplace(path, count).first;
      }
      total += found->second;
    }
    if (planned < request.shots.size()) request.shots[planned].loraElements = total;
    ++planned;
  }
}

}  // namespace shotchain
