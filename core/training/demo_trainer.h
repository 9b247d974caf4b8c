#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "demo/demo_configs.h"
#include "training/demo_dit_training.h"
#include "training/demo_vae_training.h"

namespace shotchain::training {

struct DemoTrainOptions {
  std::filesystem::path outDir;  // receives the five builtin:demo files (demo_configs.h names)
  std::uint64_t seed = 1;
  long vaeSteps = 1200;
  long ditSteps = 4000;
  int latentClips = 2000;  // training clips encoded once for the DiT
  double minutes = 0;      // wall-clock cap over all phases (0 = none); weights stay usable when hit
  // Continue the DiT of outDir (tokenizer, text encoder, VAE and preview factors are kept): the
  // latents are encoded again with the saved VAE and its statistics.
  bool resumeDit = false;
  // Train a new DiT (random start, the full recipe) on outDir's tokenizer, text encoder and VAE.
  bool newDit = false;
  // Train a new first–last-frame image-to-video DiT (demo::keyframeDitConfig; implies newDit): each training
  // clip with the condition of its first and last frames (4 of 8), its first (3 of 8) or its last (1 of 8).
  bool keyframes = false;
  // DitTrainingOptions::shapeWeight of the DiT phase. 0 (the shipped DiT's recipe) skips the
  // shape-disagreement maps; run 9 tried 8 (resources/README.md).
  double shapeWeight = 0.0;
  // The sizes to train (a resumed run keeps the saved VAE's); the DiT's in/out channels must be the VAE's z_dim.
  models::WanVaeConfig vaeConfig = demo::demoVaeConfig();
  models::WanConfig ditConfig = demo::demoDitConfig();
  std::function<void(const std::string&)> log;
};

struct DemoTrainReport {
  VaeTrainingResult vae;
  DitTrainingResult dit;
  double latentSeconds = 0;
  double totalSeconds = 0;
  std::vector<double> latentMean, latentStd;
};

// The whole recipe: tokenizer (spm_train) → frozen random UMT5 → VAE → latents of training clips
// (and the family's latent statistics) → latent→RGB factors → DiT (flow matching). Each phase
// writes its files atomically as soon as they exist; the DiT also every few hundred steps.
DemoTrainReport trainDemoModel(const DemoTrainOptions& options);

}  // namespace shotchain::training
