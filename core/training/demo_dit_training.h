#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {
class WanModel;
}

namespace shotchain::training {

// Precomputed training set of the DiT: normalised VAE latents and the text contexts of their prompts.
struct DitTrainingData {
  at::Tensor latents;             // [N, C, F, H, W]
  std::vector<int> prompt;        // [N] row of `contexts` for each latent
  at::Tensor contexts;            // [P, textLen, textDim] zero-padded
  std::vector<int> unconditional; // rows used for prompt dropout (empty and default negative prompts)
};

struct DitTrainingOptions {
  long steps = 4000;
  int batch = 32;
  double learningRate = 5e-4;
  double weightDecay = 0.01;
  double shift = 3.0;     // shifted-uniform σ
  double dropout = 0.1;   // probability of an unconditional context (classifier-free guidance)
  double emaDecay = 0.999;
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

// Flow-matching training of `model` (velocity target ε − x₀, σ shifted-uniform), AdamW, EMA.
// Deterministic given options.seed. `model` keeps the raw (non-EMA) weights; the EMA weights go
// to options.checkpoint.
DitTrainingResult trainDemoDit(models::WanModel& model, const DitTrainingData& data, const DitTrainingOptions& options);

}  // namespace shotchain::training
