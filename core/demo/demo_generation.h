#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "sequence/sequence.h"

namespace shotchain::models {
class WanModel;
class WanVae;
class Umt5TextEncoder;
}  // namespace shotchain::models

namespace shotchain::demo {

// The builtin:demo models loaded with the real loaders from a folder of the shipped files.
struct DemoModels {
  std::unique_ptr<models::WanModel> dit;
  std::unique_ptr<models::WanVae> vae;
  std::unique_ptr<models::Umt5TextEncoder> text;  // textLen = the DiT's text_len

  static DemoModels load(const std::filesystem::path& dir);
  DemoModels();
  ~DemoModels();
  DemoModels(DemoModels&&) noexcept;
  DemoModels& operator=(DemoModels&&) noexcept;
};

struct DemoShotSettings {
  int steps = 20;
  double shift = 3.0;
  double guidance = 4.0;
  int frames = 17;
  int width = 64, height = 64;
  // On a model with per-frame timesteps a handed latent is a clean prefix (diffusion forcing, as the
  // renderer does); true holds it re-noised to each step's level instead (the method of one-timestep
  // models), so an eval can show what diffusion forcing buys.
  bool renoisedSlot = false;
  // continuity.condition_noise of the continuing shots (diffusion forcing: the prefix fed this noised).
  int conditionNoise = 0;
};

struct DemoShot {
  at::Tensor latent;  // final latent [C, F', h, w] (held slots restored)
  at::Tensor frames;  // kept decoded frames [3, T, H, W] in [−1, 1]
  std::int64_t heldLatentFrames = 0;
};

// One shot, optionally continuing `previous` (its final latent and last frame) with `continuity`
// (continuity/handoff.h), the way the renderer's shot pass does: a clean prefix on a model with
// per-frame timesteps, else held slots re-noised through sampling and restored at the end.
DemoShot generateDemoShot(const DemoModels& models, const std::string& prompt, std::uint64_t seed,
                          const DemoShotSettings& settings, const Continuity& handoff = {},
                          const DemoShot* previous = nullptr);

}  // namespace shotchain::demo
