#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "demo/demo_generation.h"

namespace shotchain::demo {

// The figures of two-shot chains across one kind of cut (held-out prompts: the same colour, shape and
// background, a new direction), each a median over the chains.
struct ChainCutResult {
  std::string mode;    // continuity mode of the second shot: none, latent, latent_overlap, vae_roundtrip
  std::string method;  // "diffusion forcing" (a clean prefix), "re-noised slot" (the old way), "" for none
  int chains = 0;
  int measured = 0;              // chains where both frames at the cut show an object
  double jumpRatio = 0;          // centroid jump across the cut / median per-frame motion inside the shots
  double flash = 0;              // CutMetrics::flash (× the in-shot frame change)
  double colourDrift = 0;        // CutMetrics::colourDrift (ΔE76)
  double hueChange = 0;          // |hue of the second shot's object − the first's|, degrees (white objects left out)
  double hueWithin20 = 0;        // share of those chains within 20°
  double wrongObjectFrames = 0;  // share of the second shots' frames with no object or more than one
};

// The goals for a carried object (`latent` and `latent_overlap` cuts).
struct ChainCutGoals {
  static constexpr double jumpRatio = 2.0;
  static constexpr double flash = 2.0;
  static constexpr double colourDrift = 10.0;
  static constexpr double hueChange = 20.0;
  static constexpr double wrongObjectFrames = 0.10;
  static constexpr double noneJumpRatio = 5.0;  // a `none` cut should look like a cut
};

// Two shots of a chain: the first from prompt `first` and `seed`, the second continuing it from prompt
// `second` and seed + 1.
using ChainShots = std::function<std::pair<DemoShot, DemoShot>(const std::string& first, const std::string& second,
                                                               std::uint64_t seed)>;

// The figures of `chains` two-shot chains (seeds from 5000, held-out prompts, a new direction at the cut)
// made by `shots`; `mode` and `method` name them in the result.
ChainCutResult measureChainCuts(const std::string& mode, const std::string& method, int chains,
                                const ChainShots& shots);

// `chains` two-shot chains (seeds from 5000) with the second shot continuing under `continuity`;
// `renoisedSlot` forces the old method on a model with per-frame timesteps.
ChainCutResult evaluateChainCuts(const DemoModels& models, const DemoShotSettings& settings,
                                 const Continuity& continuity, int chains, bool renoisedSlot);

// The chain sets of the eval: none, latent and latent_overlap (each with diffusion forcing when the
// model takes per-frame timesteps, then again with the re-noised slot), vae_roundtrip.
std::vector<ChainCutResult> evaluateAllChainCuts(const DemoModels& models, const DemoShotSettings& settings,
                                                 int chains);

bool meetsChainGoals(const ChainCutResult& result);

}  // namespace shotchain::demo
