#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sequence/sequence.h"

namespace shotchain::memory {

// One line of the plan: what a component needs on the device.
struct PlanItem {
  std::string name;  // "dit weights", "vae weights", "text encoder weights", "dit activations", …
  std::uint64_t bytes = 0;
  std::string detail;  // e.g. "bfloat16, 1.42 B parameters" or "832×480×81, CFG batch 2"
};

// The memory plan made before the first shot (memory.md). Plain data, shown by `shotchain plan`,
// the report and the studio's VRAM panel.
struct MemoryPlan {
  std::string device;  // "cpu", "cuda:0"
  std::uint64_t deviceTotal = 0;
  std::optional<std::uint64_t> budget;  // the user's budget, when set
  std::uint64_t limit = 0;              // what the plan must fit: the budget, else the device total

  std::vector<PlanItem> items;  // every component, in the order they are listed
  std::uint64_t ditWeights = 0;
  std::uint64_t highNoiseExpertWeights = 0;  // two experts: the high-noise one's weights (0: one DiT)
  std::uint64_t vaeWeights = 0;
  std::uint64_t textEncoderWeights = 0;
  std::uint64_t textEncoderPeak = 0;  // encoder weights + activations while encoding prompts
  std::uint64_t imageEncoderWeights = 0;
  std::uint64_t imageEncoderPeak = 0;   // CLIP weights + activations while encoding a shot's pictures (0: none)
  std::uint64_t ditActivationPeak = 0;  // largest shot, CFG batch 2
  std::uint64_t vaeDecodeFull = 0;      // untiled decode of the largest shot, beyond the weights
  std::uint64_t vaeDecodeTiled = 0;     // with `tile`, beyond the weights
  std::int64_t tile = 0;                // latent pixels per tile when the decode is tiled (0 = untiled)
  std::int64_t tileOverlap = 0;
  std::uint64_t ringBufferBytes = 0;
  std::uint64_t kvCacheBytes = 0;  // a stream's KV cache at its largest (0: no stream shot)
  std::uint64_t margin = 0;

  // Peak device bytes under each policy (the largest of the phases: text encoding, sampling, decode).
  std::uint64_t peakPinned = 0;       // DiT + VAE resident, untiled decode
  std::uint64_t peakPinnedTiled = 0;  // DiT + VAE resident, tiled decode
  std::uint64_t peakOffload = 0;      // DiT on the host during the decode
  std::uint64_t peakReload = 0;       // DiT freed after each shot

  ResidencyPolicy requested = ResidencyPolicy::Auto;
  ResidencyPolicy chosen = ResidencyPolicy::Pinned;
  bool tiledDecode = false;        // the chosen plan decodes in tiles
  bool splitGuidance = false;      // guidance as two batch-1 DiT calls per step (batch 2 did not fit)
  bool fits = false;               // the chosen plan fits `limit`
  std::string reason;              // one sentence: why this policy (or why nothing fits)
  std::vector<std::string> notes;  // what the user should know beyond memory (one line each)
  // Two experts (docs/wan22.md §8): where they live, why, and the bytes each enabled shot moves for them
  // (swap: host↔device at the boundary and back; reload: read from disk), in the order of the enabled shots.
  ExpertResidency expertsChosen = ExpertResidency::Auto;  // Auto: one DiT
  std::string expertReason;
  std::vector<std::uint64_t> expertBytesPerShot;
  std::uint64_t peakExpertsResident = 0;  // the chosen policy's peak with both experts on the device
  std::uint64_t peakExpertsSwapped = 0;   // … with one at a time
  std::uint64_t chosenPeak() const;
};

}  // namespace shotchain::memory
