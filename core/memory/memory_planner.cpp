#include "memory/memory_planner.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "memory/device_memory.h"
#include "memory/expert_plan.h"
#include "models/continuation_note.h"
#include "util/byte_size.h"

namespace shotchain::memory {
namespace {

std::string dtypeName(c10::ScalarType t) {
  switch (t) {
    case c10::kBFloat16:
      return "bfloat16";
    case c10::kHalf:
      return "float16";
    case c10::kFloat:
      return "float32";
    case c10::kDouble:
      return "float64";
    default:
      return c10::toString(t);
  }
}

std::string gib(std::uint64_t bytes) { return util::formatByteSize(bytes); }

std::string shapeText(const PlanShot& s) {
  return std::to_string(s.channels) + "×" + std::to_string(s.frames) + "×" + std::to_string(s.height) + "×" +
         std::to_string(s.width);
}

struct Decode {
  std::uint64_t full = 0, tiled = 0;
  models::VaeTiling tiling;
};

models::LatentShape latentOf(const PlanShot& s) { return {s.channels, s.frames, s.height, s.width}; }

// The largest decode over the shots; tiles chosen to fit `tiledBudget` (bytes beyond the weights).
Decode decodeBytes(const PlanRequest& r, std::uint64_t tiledBudget) {
  Decode d;
  for (const PlanShot& s : r.shots) {
    const std::int64_t decodeFrames = s.frames + s.decodePrefixFrames;
    d.full = std::max(d.full, r.vae->decodeBytes(decodeFrames, s.height, s.width, r.vaeDtype, {}, r.decodeWholeClip));
    const models::VaeTiling tiling =
        r.vae->chooseTiling(decodeFrames, s.height, s.width, r.vaeDtype, tiledBudget, r.decodeWholeClip);
    const models::VaeTiling used = tiling.enabled() ? tiling : models::VaeTiling{};
    const std::uint64_t bytes =
        r.vae->decodeBytes(decodeFrames, s.height, s.width, r.vaeDtype, used, r.decodeWholeClip);
    if (bytes >= d.tiled) {
      d.tiled = bytes;
      if (tiling.enabled()) d.tiling = tiling;
    }
  }
  return d;
}

std::uint64_t minus(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

const char* policyWord(ResidencyPolicy p) { return toString(p); }

MemoryPlan planWithBatch(const PlanRequest& r) {
  MemoryPlan plan;
  plan.device = r.device;
  plan.deviceTotal = r.deviceTotal;
  plan.budget = r.budget;
  plan.limit = r.budget ? std::min(*r.budget, r.deviceTotal ? r.deviceTotal : *r.budget) : r.deviceTotal;
  plan.requested = r.policy;
  plan.margin = r.margin ? *r.margin : std::min<std::uint64_t>(plan.limit / 20, 1ull << 30);

  // fp8 and GGUF matmul weights are kept as stored (WanLoadOptions::keepQuantised, as the families load them).
  plan.ditWeights = r.dit->weightBytes(r.ditDtype) - r.dit->keptAsStoredSaving(r.ditDtype);
  if (r.ditHighNoise)
    plan.highNoiseExpertWeights =
        r.ditHighNoise->weightBytes(r.ditHighNoiseDtype) - r.ditHighNoise->keptAsStoredSaving(r.ditHighNoiseDtype);
  const bool highResident = r.ditHighNoise && r.highNoiseResident;
  // One expert at a time: the device holds the larger of the two where it held the DiT.
  if (r.ditHighNoise && !highResident) plan.ditWeights = std::max(plan.ditWeights, plan.highNoiseExpertWeights);
  plan.vaeWeights = r.vae->weightBytes(r.vaeDtype);
  plan.textEncoderWeights = r.textEncoderWeights;
  plan.textEncoderPeak = r.textEncoderWeights + r.textEncoderActivations;
  plan.imageEncoderWeights = r.imageEncoderWeights;
  plan.imageEncoderPeak = r.imageEncoderWeights + r.imageEncoderActivations;
  plan.ringBufferBytes = r.ringBufferBytes;
  plan.kvCacheBytes = r.kvCacheBytesPerFrame * static_cast<std::uint64_t>(r.streamChunk * 2 + r.streamWindow);

  const PlanShot* largest = &r.shots.front();
  std::uint64_t latentBytes = 0;
  std::uint64_t stepCache = 0, loraPatch = 0;
  for (const PlanShot& s : r.shots) {
    const std::uint64_t held = static_cast<std::uint64_t>(s.stepCacheTensors) * static_cast<std::uint64_t>(s.branches) *
                               static_cast<std::uint64_t>(r.dit->tokens(latentOf(s))) *
                               static_cast<std::uint64_t>(r.dit->hiddenSize()) * 4;
    const std::uint64_t lora = s.loraElements * static_cast<std::uint64_t>(c10::elementSize(r.ditDtype));
    const std::uint64_t workspace = r.device == "cpu" ? r.dit->hostMatmulWorkspace(r.ditDtype) : 0;
    const std::uint64_t a = r.dit->activationBytes(r.ditDtype, r.cfgBatch, latentOf(s)) + workspace + held + lora;
    if (a > plan.ditActivationPeak) {
      plan.ditActivationPeak = a;
      stepCache = held;
      loraPatch = lora;
      largest = &s;
    }
    latentBytes = std::max<std::uint64_t>(latentBytes,
                                          static_cast<std::uint64_t>(s.channels * s.frames * s.height * s.width) * 4);
  }
  // The sampler's own tensors: latent, noise, the two velocities, the solver's history.
  plan.ditActivationPeak += 8 * latentBytes;

  // A high-noise expert stays resident beside the VAE whatever the policy does with the other DiT.
  const std::uint64_t always =
      plan.vaeWeights + plan.ringBufferBytes + plan.kvCacheBytes + (highResident ? plan.highNoiseExpertWeights : 0);
  const std::uint64_t resident = plan.ditWeights + always;
  const std::uint64_t usable = minus(plan.limit, plan.margin);
  const std::uint64_t sampling = resident + plan.ditActivationPeak;
  // Prompts are encoded before the first step: beside the resident DiT under pinned, before the
  // DiT is loaded (or while it is on the host) under offload and reload.
  const std::uint64_t text = plan.textEncoderPeak + resident;
  const std::uint64_t textWithoutDit = plan.textEncoderPeak + always;
  // A shot's pictures are encoded before it samples, the DiT on the device under every policy.
  const std::uint64_t image = plan.imageEncoderPeak + resident;

  const Decode pinnedDecode = decodeBytes(r, minus(usable, resident));
  plan.vaeDecodeFull = pinnedDecode.full;
  plan.peakPinned = std::max({text, image, sampling, resident + pinnedDecode.full});
  plan.peakPinnedTiled = std::max({text, image, sampling, resident + pinnedDecode.tiled});

  const std::uint64_t withoutDit = always;
  const Decode offDecode = decodeBytes(r, minus(usable, withoutDit));
  const std::uint64_t offFull = std::max({textWithoutDit, image, sampling, withoutDit + offDecode.full});
  const std::uint64_t offTiled = std::max({textWithoutDit, image, sampling, withoutDit + offDecode.tiled});

  auto fits = [&](std::uint64_t peak) { return peak + plan.margin <= plan.limit; };
  const bool pinnedFull = fits(plan.peakPinned),
             pinnedTiled = pinnedDecode.tiling.enabled() && fits(plan.peakPinnedTiled);
  const bool offloadFull = fits(offFull), offloadTiled = offDecode.tiling.enabled() && fits(offTiled);

  // The offload/reload peaks are those of their cheapest decode that fits (the full one otherwise).
  const bool offUsesTiles = !offloadFull && offloadTiled;
  plan.peakOffload = plan.peakReload = offUsesTiles ? offTiled : offFull;

  const std::string limitText = gib(plan.limit) + (plan.budget ? " budget" : " of " + plan.device + " memory") +
                                " (margin " + gib(plan.margin) + ")";
  auto useTiling = [&](const Decode& d) {
    plan.tiledDecode = true;
    plan.tile = d.tiling.tile;
    plan.tileOverlap = d.tiling.overlap;
    plan.vaeDecodeTiled = d.tiled;
  };
  // The fallback tile, for an out-of-memory at an untiled decode.
  plan.tile = pinnedDecode.tiling.enabled() ? pinnedDecode.tiling.tile : 0;
  plan.tileOverlap = pinnedDecode.tiling.enabled() ? pinnedDecode.tiling.overlap : 0;
  plan.vaeDecodeTiled = pinnedDecode.tiled;

  auto whatFits = [&]() -> std::string {
    if (pinnedFull) return "pinned would fit (" + gib(plan.peakPinned) + ")";
    if (pinnedTiled)
      return "pinned with a tiled decode would fit (" + gib(plan.peakPinnedTiled) + ", tile " +
             std::to_string(pinnedDecode.tiling.tile) + ")";
    if (offloadFull || offloadTiled) return "offload would fit (" + gib(plan.peakOffload) + ")";
    return "no policy fits: even offload with the smallest tiles needs " + gib(offTiled + plan.margin);
  };

  switch (r.policy) {
    case ResidencyPolicy::Auto:
      if (pinnedFull) {
        plan.chosen = ResidencyPolicy::Pinned;
        plan.fits = true;
        plan.reason = "auto chose pinned: DiT and VAE stay resident and the plan (" + gib(plan.peakPinned) +
                      ") fits the " + limitText + ".";
      } else if (pinnedTiled) {
        plan.chosen = ResidencyPolicy::Pinned;
        plan.fits = true;
        useTiling(pinnedDecode);
        plan.reason = "auto chose pinned with a tiled decode (tile " + std::to_string(plan.tile) +
                      "): the full decode would need " + gib(plan.peakPinned + plan.margin) + " of the " + limitText +
                      ", tiled it needs " + gib(plan.peakPinnedTiled + plan.margin) + ".";
      } else if (offloadFull || offloadTiled) {
        plan.chosen = ResidencyPolicy::Offload;
        plan.fits = true;
        if (offUsesTiles) useTiling(offDecode);
        plan.reason = "auto chose offload" +
                      std::string(offUsesTiles ? " with a tiled decode (tile " + std::to_string(plan.tile) + ")" : "") +
                      ": pinned needs " + gib(std::min(plan.peakPinned, plan.peakPinnedTiled) + plan.margin) +
                      " even with a tiled decode, over the " + limitText +
                      "; moving the DiT to host memory for the decode needs " + gib(plan.peakOffload + plan.margin) +
                      ".";
      } else {
        plan.chosen = ResidencyPolicy::Offload;
        plan.fits = false;
        if (offDecode.tiling.enabled()) useTiling(offDecode);
        plan.reason = "nothing fits the " + limitText + ": even offload with a tiled decode needs " +
                      gib(offTiled + plan.margin) + " (sampling the largest shot alone needs " +
                      gib(sampling + plan.margin) + ").";
      }
      break;
    case ResidencyPolicy::Pinned:
      plan.chosen = ResidencyPolicy::Pinned;
      if (pinnedFull) {
        plan.fits = true;
        plan.reason =
            "pinned: DiT and VAE stay resident and the plan (" + gib(plan.peakPinned) + ") fits the " + limitText + ".";
      } else if (pinnedTiled) {
        plan.fits = true;
        useTiling(pinnedDecode);
        plan.reason = "pinned with a tiled decode (tile " + std::to_string(plan.tile) +
                      "): the full decode would need " + gib(plan.peakPinned + plan.margin) + " of the " + limitText +
                      ".";
      } else {
        plan.fits = false;
        plan.reason = "pinned does not fit: it needs " + gib(plan.peakPinnedTiled + plan.margin) +
                      " even with a tiled decode, over the " + limitText + "; " + whatFits() + ".";
      }
      break;
    case ResidencyPolicy::Offload:
    case ResidencyPolicy::Reload: {
      plan.chosen = r.policy;
      const std::string name = policyWord(r.policy);
      if (offloadFull || offloadTiled) {
        plan.fits = true;
        if (offUsesTiles) useTiling(offDecode);
        plan.reason = name +
                      (offUsesTiles ? " with a tiled decode (tile " + std::to_string(plan.tile) + ")" : std::string()) +
                      ": the DiT leaves the device for the decode; the plan (" + gib(plan.peakOffload) + ") fits the " +
                      limitText + ".";
      } else {
        plan.fits = false;
        if (offDecode.tiling.enabled()) useTiling(offDecode);
        plan.reason = name + " does not fit: it needs " + gib(offTiled + plan.margin) +
                      " with the smallest tiles, over the " + limitText + "; no policy fits.";
      }
      break;
    }
  }
  if (!plan.tiledDecode && plan.tile == 0 && offDecode.tiling.enabled()) {
    plan.tile = offDecode.tiling.tile;  // still a fallback tile for an out-of-memory at the decode
    plan.tileOverlap = offDecode.tiling.overlap;
  }

  const bool keptAsStored = r.dit->keptAsStoredSaving(r.ditDtype) > 0;
  const std::string ditDetail = dtypeName(r.ditDtype) +
                                (keptAsStored ? " matmuls (quantised weights kept as stored), " : " matmuls, ") +
                                std::to_string(static_cast<double>(r.dit->parameterCount()) / 1e9).substr(0, 5) +
                                " B parameters (" + r.dit->variant() + ")";
  plan.items = {
      {"text encoder", plan.textEncoderPeak,
       "weights " + gib(plan.textEncoderWeights) + " + activations; released before the first step"},
      {!r.ditHighNoise ? "dit weights"
       : highResident  ? "dit weights (low-noise expert)"
                       : "dit weights (one expert)",
       plan.ditWeights, ditDetail},
      {"vae weights", plan.vaeWeights,
       dtypeName(r.vaeDtype) + ", " + std::to_string(r.vae->parameterCount()) + " parameters"},
      {"dit activations", plan.ditActivationPeak,
       "largest shot " + shapeText(*largest) + ", CFG batch " + std::to_string(r.cfgBatch) +
           (stepCache > 0 ? ", its step cache's " + gib(stepCache) : std::string()) +
           (loraPatch > 0 ? ", its LoRA-patched weights' " + gib(loraPatch) : std::string())},
      {"vae decode (full)", plan.vaeDecodeFull, "largest shot, untiled"},
      {"vae decode (tiled)", plan.vaeDecodeTiled,
       plan.tile ? "tile " + std::to_string(plan.tile) + ", overlap " + std::to_string(plan.tileOverlap)
                 : "not needed"},
      {"ring buffer", plan.ringBufferBytes, "handoff latents"},
  };
  if (r.ditHighNoise)
    plan.items.insert(plan.items.begin() + 2,
                      {"dit weights (high-noise expert)", highResident ? plan.highNoiseExpertWeights : 0,
                       dtypeName(r.ditHighNoiseDtype) + " matmuls, " + gib(plan.highNoiseExpertWeights) +
                           (highResident ? "; resident beside the low-noise expert"
                                         : "; takes the low-noise expert's place on the device for its steps")});
  if (plan.imageEncoderPeak > 0)
    plan.items.insert(
        plan.items.begin() + 1,
        {"image encoder", plan.imageEncoderPeak,
         "CLIP weights " + gib(plan.imageEncoderWeights) +
             " + activations; loaded for each shot's pictures beside the DiT, released before it samples"});
  if (plan.kvCacheBytes > 0)
    plan.items.push_back({"kv cache", plan.kvCacheBytes,
                          "stream: sink " + std::to_string(r.streamChunk) + " + window " +
                              std::to_string(r.streamWindow) + " + chunk " + std::to_string(r.streamChunk) +
                              " latent frames, " + std::to_string(r.streamBranches) +
                              (r.streamBranches == 1 ? " branch" : " branches")});
  plan.items.push_back({"margin", plan.margin, "allocator slack"});
  return plan;
}

// The widest stream window (whole chunks, below the requested one) with which the plan fits; 0: none.
std::int64_t widestFittingWindow(const PlanRequest& r) {
  PlanRequest smaller = r;
  for (smaller.streamWindow = r.streamWindow - r.streamChunk; smaller.streamWindow >= r.streamChunk;
       smaller.streamWindow -= r.streamChunk)
    if (planWithBatch(smaller).fits) return smaller.streamWindow;
  return 0;
}

// The plan for one placement of the experts (or for one DiT).
MemoryPlan planOnePlacement(const PlanRequest& r) {
  MemoryPlan plan = planWithBatch(r);
  if (!plan.fits && plan.kvCacheBytes > 0) {
    const std::int64_t window = widestFittingWindow(r);
    plan.reason += " The stream's KV cache needs " + gib(plan.kvCacheBytes) + " at window " +
                   std::to_string(r.streamWindow) +
                   (window > 0 ? "; sampler.stream_window " + std::to_string(window) + " would fit."
                               : "; even a window of one chunk does not fit.");
  }
  if (r.handsOff && r.dit->cleanFirstFrames())
    plan.notes.push_back(models::cleanFirstFrameContinuationNote(r.dit->family()));
  else if (r.handsOff && !r.dit->perFrameTimesteps())
    plan.notes.push_back(models::approximateContinuationNote(r.dit->family()));
  if (plan.fits || r.cfgBatch < 2) return plan;
  PlanRequest split = r;
  split.cfgBatch = 1;
  MemoryPlan alternative = planWithBatch(split);
  if (!alternative.fits) return plan;
  alternative.splitGuidance = true;
  alternative.notes = plan.notes;
  alternative.reason = "guidance as one batch-2 DiT call does not fit (sampling the largest shot needs " +
                       gib(plan.ditWeights + plan.highNoiseExpertWeights + plan.vaeWeights + plan.ringBufferBytes +
                           plan.ditActivationPeak + plan.margin) +
                       "), so it runs as two batch-1 calls per step (about twice the sampling time); " +
                       alternative.reason;
  return alternative;
}

}  // namespace

MemoryPlan planMemory(const PlanRequest& r) {
  if (r.shots.empty()) throw std::invalid_argument("memory plan: no enabled shot");
  return r.ditHighNoise ? planExperts(r, &planOnePlacement) : planOnePlacement(r);
}

std::string formatPlan(const MemoryPlan& plan) {
  std::ostringstream out;
  out << "memory plan for " << plan.device << " (" << util::formatByteSize(plan.deviceTotal) << ")";
  if (plan.budget) {
    // In the unit the user wrote ("16 GB"), with the binary figure the rest of the plan uses.
    const std::string asWritten = util::formatByteSizeExact(*plan.budget), binary = util::formatByteSize(*plan.budget);
    out << ", budget " << asWritten << (asWritten == binary ? "" : " (" + binary + ")");
  }
  out << "\n\n";
  std::size_t nameWidth = 0, sizeWidth = 0;
  for (const PlanItem& item : plan.items) {
    nameWidth = std::max(nameWidth, item.name.size());
    sizeWidth = std::max(sizeWidth, util::formatByteSize(item.bytes).size());
  }
  auto row = [&](const std::string& name, const std::string& size, const std::string& detail) {
    out << "  " << name << std::string(nameWidth + 2 - std::min(nameWidth + 1, name.size()), ' ')
        << std::string(sizeWidth - std::min(sizeWidth, size.size()), ' ') << size << "  " << detail << "\n";
  };
  for (const PlanItem& item : plan.items) row(item.name, util::formatByteSize(item.bytes), item.detail);
  out << "\n  peak by policy:\n";
  std::vector<std::pair<std::string, std::uint64_t>> peaks = {{"pinned", plan.peakPinned},
                                                              {"pinned, tiled decode", plan.peakPinnedTiled},
                                                              {"offload", plan.peakOffload},
                                                              {"reload", plan.peakReload}};
  for (const auto& [name, bytes] : peaks) {
    nameWidth = std::max(nameWidth, name.size());
    sizeWidth = std::max(sizeWidth, util::formatByteSize(bytes).size());
  }
  for (const auto& [name, bytes] : peaks)
    row(name, util::formatByteSize(bytes), bytes + plan.margin <= plan.limit ? "fits" : "over the limit");
  const bool budgetIsLimit = plan.budget && *plan.budget == plan.limit;
  out << "\n  limit " << (budgetIsLimit ? util::formatByteSizeExact(plan.limit) : util::formatByteSize(plan.limit))
      << (plan.budget ? " (budget)" : " (device)") << "\n";
  out << "  policy: " << toString(plan.chosen);
  if (plan.tiledDecode) out << ", tiled decode (tile " << plan.tile << ", overlap " << plan.tileOverlap << ")";
  if (plan.splitGuidance) out << ", guidance split into two batch-1 calls";
  out << " (requested " << toString(plan.requested) << "), peak " << util::formatByteSize(plan.chosenPeak())
      << " + margin " << util::formatByteSize(plan.margin) << ": " << (plan.fits ? "fits" : "DOES NOT FIT") << "\n";
  out << "  " << plan.reason << "\n";
  for (const std::string& note : plan.notes) out << "  note: " << note << "\n";
  return out.str();
}

}  // namespace shotchain::memory
