#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "training/diffusion_forcing_batch.h"

namespace shotchain::models {
class WanModel;
}

namespace shotchain::training {

// Precomputed training set of the DiT: normalised VAE latents and the text contexts of their prompts.
struct DitTrainingData {
  // [N, C, F, H, W]. With continuationPrompt: two-clip chains encoded in one causal pass, the first
  // clip's latent frames then the second clip's continuation latents.
  at::Tensor latents;
  std::vector<int> prompt;              // [N] row of `contexts` for each latent (the first clip's)
  std::vector<int> continuationPrompt;  // [N] the second clip's rows, or empty (no chains)
  at::Tensor contexts;                  // [P, textLen, textDim] zero-padded
  std::vector<int> unconditional;       // rows used for prompt dropout (empty and default negative prompts)
  // Optional [N, 1, F, H, W]: the share of each latent cell's pixels where the clip's three shapes
  // disagree (demo::shapeDisagreementMask on the latent grid), for DitTrainingOptions::shapeWeight.
  at::Tensor shapeCells;
  // Optional [N, temporal + z, F, H, W]: an image-to-video DiT's condition of each latent, given after the
  // latent it denoises (continuity::imageToVideoCondition).
  at::Tensor imageConditions;
};

struct DitTrainingOptions {
  long steps = 4000;
  int batch = 32;
  double learningRate = 5e-4;
  double weightDecay = 0.01;
  double shift = 3.0;    // shifted-uniform σ
  double dropout = 0.1;  // probability of an unconditional context (classifier-free guidance)
  double emaDecay = 0.999;
  // Extra loss weight on latent cells that differ from their frame's background (the per-channel
  // spatial median), by up to `objectWeight` at `objectSaturation` latent stds and beyond. The object
  // covers ~6 % of the cells, so unweighted the loss is mostly background; and on the gray background
  // an object's latent differs from it 4× less in energy than on black (peak 1.2 against 2.8 stds), so
  // the plain loss barely sees gray objects, and the DiT scatters them into several blobs.
  double objectWeight = 0.0;
  double objectSaturation = 0.5;
  // Extra loss weight on the cells where the prompt's shape word changes the clip (data.shapeCells,
  // full from a quarter of the cell on). They are a few cells at the object's outline, so without it
  // the DiT hardly reads the shape word: swapping it raised the loss by 0.002 at σ 0.7, the colour
  // word by 0.12, though the text encoder's contexts differ as much for either.
  double shapeWeight = 0.0;
  // Diffusion forcing (models with per-frame timesteps): per-frame σ, clean prefixes and chain windows
  // of `window` frames, drawn by `forcing`. Off: one σ per clip over all of data.latents' frames.
  bool diffusionForcing = false;
  DiffusionForcingRecipe forcing;
  std::uint64_t seed = 0;
  double maxSeconds = 0;  // 0 = no cap
  long checkpointEvery = 0;
  // Receives the EMA weights (official names) at checkpoints and at the end.
  std::function<void(long step, const std::vector<std::pair<std::string, at::Tensor>>& ema)> checkpoint;
  std::function<void(const std::string&)> log;
};

struct DitTrainingResult {
  long steps = 0;
  double finalLoss = 0;  // mean over the last 100 steps
  double seconds = 0;
};

// Per latent cell of x0 [B, C, F, H, W]: 1 + weight · min(1, |x0 − background| / saturation), the
// deviation being the largest over channels and the background each frame's per-channel spatial
// median. Shape [B, 1, F, H, W]; no gradient.
at::Tensor objectLossWeights(const at::Tensor& x0, double weight, double saturation);
// weight · min(1, cells / 0.25) for shapeCells rows [B, 1, F, H, W]; no gradient.
at::Tensor shapeLossWeights(const at::Tensor& shapeCells, double weight);

// Flow-matching training of `model` (velocity target ε − x₀, σ shifted-uniform), AdamW, EMA; with
// options.diffusionForcing one σ per latent frame, and the loss left out on the clean prefix.
// With options.objectWeight (and shapeWeight) the squared error is averaged under objectLossWeights
// (plus shapeLossWeights).
// Deterministic given options.seed. `model` keeps the raw (non-EMA) weights; the EMA weights go
// to options.checkpoint.
DitTrainingResult trainDemoDit(models::WanModel& model, const DitTrainingData& data, const DitTrainingOptions& options);

}  // namespace shotchain::training
