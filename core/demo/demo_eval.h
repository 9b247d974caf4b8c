#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "demo/chain_cut_eval.h"
#include "demo/demo_generation.h"
#include "demo/prompt_reliance.h"
#include "demo/vae_handoff.h"

namespace shotchain::demo {

struct DemoEvalOptions {
  std::filesystem::path dir;  // the shipped files
  int samples = 60;           // held-out clips (seeds ≥ kHeldOutSeedStart): their prompts, one sample each
  int chains = 8;             // two-shot chains per continuity mode (and method)
  int psnrClips = 24;         // held-out clips for the VAE round trip
  DemoShotSettings settings;
  std::function<void(const std::string&)> log;
};

// How often the frame analyser names a clip's colour, shape and direction correctly.
struct AttributeAccuracy {
  double colour = 0, shape = 0, direction = 0;
};

// The accuracies over the held-out samples of one background.
struct BackgroundAccuracy {
  std::string background;
  int samples = 0;
  AttributeAccuracy accuracy;
};

struct DemoEvalReport {
  int samples = 0;
  double found = 0;  // fraction of samples with an object in most frames
  double colourAccuracy = 0, shapeAccuracy = 0, directionAccuracy = 0;
  std::vector<BackgroundAccuracy> byBackground;  // demoBackgrounds() order
  std::vector<ChainCutResult> continuity;        // evaluateAllChainCuts' sets
  double vaePsnr = 0;                            // dB, mean over held-out clips (frames in 0…1)
  // The ceiling of the three accuracies: the analyser on those held-out clips as rendered, and on
  // their VAE round trips (what a DiT that produced the clips' exact latents would score).
  AttributeAccuracy sourceClips, vaeRoundTrips;
  VaeHandoffErrors vaeHandoff;
  std::vector<PromptReliance> promptReliance;  // at σ 0.4, 0.7, 0.9
  double sequenceSeconds = 0;                  // the 4-shot demo story, text + sampling + decode
  DemoShotSettings settings;
};

DemoEvalReport evaluateDemo(const DemoEvalOptions& options);
// One table with the goals beside the figures.
std::string formatDemoEvalTable(const DemoEvalReport& report);
std::string demoEvalJson(const DemoEvalReport& report);

// The 4-shot story of workflows/demo.json: one red circle moving right, down, left, up.
std::vector<std::string> demoStoryPrompts();

}  // namespace shotchain::demo
