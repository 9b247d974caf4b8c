#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace shotchain::training {

// How diffusion-forcing batches are drawn from encoded two-clip chains (continuation.md): every latent
// frame gets its own σ, and some windows start with clean frames at timestep 0, exactly what a handed
// shot gives the model.
struct DiffusionForcingRecipe {
  std::int64_t window = 5;  // latent frames the model sees (one clip)
  double chainShare =
      0.4;  // windows across the chain's cut: the first clip's last 1–2 latents held, the second's prompt
  double prefixShare = 0.3;       // of the other windows (the first clip alone): a held prefix of 1–2 frames
  double sharedSigmaShare = 0.5;  // windows whose noisy frames share one σ (the sampler's synchronous schedule)
  std::int64_t maxPrefix = 2;
  // A share of the prefixes is fed slightly noised, at σ ~ U(0, prefixNoise) and that timestep (what
  // continuity.condition_noise does at render time): the handed latent is the previous shot's own
  // generation, never quite an encoded one, and the noise covers the difference.
  double prefixNoiseShare = 0.5;
  double prefixNoise = 0.1;
};

struct DiffusionForcingBatch {
  at::Tensor x0;         // [B, C, window, H, W]
  at::Tensor noisy;      // (1 − σ)·x₀ + σ·ε per frame; the prefix frames x₀ or lightly noised
  at::Tensor target;     // ε − x₀
  at::Tensor timestep;   // [B, window] float32, 1000·σ (0 on a clean prefix)
  at::Tensor lossMask;   // [B, 1, window, 1, 1] float32: 0 on the prefix, 1 on the frames to denoise
  at::Tensor promptRow;  // [B] int64: rows of the first clip's or the second clip's prompt
};

// σ is drawn shifted-uniform with `shift`, per frame. latents [N, C, F, H, W]: the first clip's `window` latent frames, then (F > window) the second
// clip's continuation latents of the same causal encode. firstPrompt, secondPrompt [N] int64 rows;
// secondPrompt may be undefined when F == window (then no chain windows).
DiffusionForcingBatch makeDiffusionForcingBatch(const at::Tensor& latents, const at::Tensor& index,
                                                const at::Tensor& firstPrompt, const at::Tensor& secondPrompt,
                                                const DiffusionForcingRecipe& recipe, double shift,
                                                at::Generator& generator);

}  // namespace shotchain::training
