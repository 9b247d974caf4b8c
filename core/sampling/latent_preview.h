#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/family_knowledge.h"

namespace shotchain::sampling {

// A cheap latent → RGB preview: rgb_k = Σ_c latent_c·weights[c][k] + bias[k], output in about
// [−1, 1] (mapped to 8 bits as (x + 1)/2). Applied to the model-space latent (the normalised
// latent the DiT sees, or the solver's x₀ prediction), per latent pixel, no VAE.
struct LatentRgbFactors {
  std::vector<std::array<float, 3>> weights;  // [channels][R, G, B]
  std::array<float, 3> bias{0.0f, 0.0f, 0.0f};
  std::string source;  // where the numbers come from

  int channels() const { return static_cast<int>(weights.size()); }
};

// A VAE family's published factors (models/family_knowledge.h).
LatentRgbFactors latentRgbFactors(const models::LatentRgbTable& table);

// latent [C, F, H, W] or [B, C, F, H, W] (any float dtype/device) → float32 RGB
// [F, H, W, 3] or [B, F, H, W, 3] on the same device, unclamped (about −1…1).
at::Tensor latentToRgb(const at::Tensor& latent, const LatentRgbFactors& factors);
// The same, as 8-bit frames: round(clamp((rgb + 1)/2, 0, 1)·255), uint8 [.., F, H, W, 3] on the CPU.
at::Tensor latentToRgb8(const at::Tensor& latent, const LatentRgbFactors& factors);

// Averages a decoded video [3, T, H, W] (or [B, 3, T, H, W]) onto the latent grid of a causal
// video VAE: latent frame 0 ↔ pixel frame 0, latent frame k ≥ 1 ↔ pixel frames
// (k−1)·tf + 1 … k·tf; spatial sf×sf average pooling. T must be 1 + n·tf, H and W multiples of sf.
at::Tensor poolVideoToLatentGrid(const at::Tensor& video, int temporalFactor, int spatialFactor);

// Least-squares fit of factors (with bias) from pairs: latents [.., C, F, H, W] and the RGB
// targets on the same grid [.., 3, F, H, W] (e.g. poolVideoToLatentGrid of the decoded clip).
// Solved in float64. Throws std::invalid_argument on shape mismatch or too few samples.
LatentRgbFactors fitLatentRgbFactors(const at::Tensor& latents, const at::Tensor& rgb);

// Factors as safetensors: `latent_rgb_factors` F32 [C, 3], `latent_rgb_factors_bias` F32 [3],
// metadata `format` = "shotchain-latent-rgb-v1" and `source`. Atomic write.
void saveLatentRgbFactors(const std::filesystem::path& path, const LatentRgbFactors& factors);
// Throws std::runtime_error (naming the file) for a missing tensor or wrong shapes.
LatentRgbFactors loadLatentRgbFactors(const std::filesystem::path& path);

}  // namespace shotchain::sampling
