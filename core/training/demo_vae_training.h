#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace shotchain::models {
class WanVae;
}

namespace shotchain::training {

struct VaeTrainingOptions {
  long steps = 1500;
  int batch = 4;
  int cropFrames = 17;        // the whole clip: trained on fewer chunks, the causal cache drifts in later ones
  int cropSize = 64;          // spatial crop (multiple of 8)
  double objectCrops = 0.75;  // share of crops placed around the object (edges are what is hard to learn)
  double learningRate = 1e-3;
  double klWeight = 1e-6;
  double l1Weight = 0.2;
  // Extra loss weight on the object's pixels: unweighted, the background dominates and the VAE
  // learns the objects' colours late (green and blue came back as one cyan).
  double objectWeight = 0.0;
  // Weight of the handoff term: a random chunk's latent decoded alone, as a shot's first frame, against
  // that chunk's last frame (what `latent` continuity shows after a cut). Without it that decode path
  // is never trained and lands wherever the VAE happens to put it (11 px off in one run, 2 in another).
  double handoffWeight = 0.0;
  std::uint64_t seed = 0;
  double maxSeconds = 0;  // 0 = no time cap; otherwise stop early (weights still usable)
  long checkpointEvery = 0;
  std::function<void(long step)> checkpoint;
  std::function<void(const std::string&)> log;
};

struct VaeTrainingResult {
  long steps = 0;
  double finalLoss = 0;     // mean over the last 50 steps
  double finalMse = 0;      // reconstruction MSE in [−1, 1] units, last 50 steps
  double finalHandoff = 0;  // the (weighted) handoff term, last 50 steps
  double seconds = 0;
};

// Trains `vae` (made trainable here, left frozen after) to reconstruct random crops of training
// clips (demo::randomClipParams seeds below kHeldOutSeedStart): MSE + L1 + a small KL on the
// reparameterised posterior, plus the handoff term. Deterministic given options.seed.
VaeTrainingResult trainDemoVae(models::WanVae& vae, const VaeTrainingOptions& options);

}  // namespace shotchain::training
