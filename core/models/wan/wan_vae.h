#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/video_vae.h"
#include "models/wan/wan_vae_config.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

struct WanVaeLoadOptions {
  // Dtype of the weights and activations. nullopt = float32 (the reference runs the VAE in fp32).
  std::optional<at::ScalarType> computeDtype;
  at::Device device = at::kCPU;
};

class WanVae;

// Incremental decoder: push normalised latent frames one at a time (as a sampler or a ring buffer
// produces them) and get their pixel frames back. Holds the causal caches (wan21.md §2.5), which
// are the only state carried between frames; memory does not grow with the clip length.
class WanVaeDecodeStream final : public VaeDecodeStream {
 public:
  // latentFrame [z, 1, h, w] or [z, h, w]; returns [3, 1, 8h, 8w] the first time, [3, 4, 8h, 8w] after.
  at::Tensor push(const at::Tensor& latentFrame) override;
  std::int64_t latentFramesIn() const override;
  std::int64_t pixelFramesOut() const override;
  void reset() override;  // start a new clip (clears the caches)

  ~WanVaeDecodeStream() override;
  WanVaeDecodeStream(WanVaeDecodeStream&&) noexcept;
  WanVaeDecodeStream& operator=(WanVaeDecodeStream&&) noexcept;

 private:
  friend class WanVae;
  struct State;
  explicit WanVaeDecodeStream(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Metadata keys of a VAE file holding its family's per-channel latent statistics (JSON arrays of
// z_dim numbers). Without them: Wan 2.1's values for z_dim 16, identity otherwise.
extern const char* const kWanVaeLatentMeanKey;  // "latents_mean"
extern const char* const kWanVaeLatentStdKey;   // "latents_std"

// The encoder's posterior (raw, not normalised): [B, z, T', h, w] each.
struct WanVaeMoments {
  at::Tensor mu, logVar;
};

// The Wan 2.1 causal 3D VAE (wan21.md §2): encode returns μ only.
class WanVae final : public VideoVae {
 public:
  // Strict: every tensor the config needs must be present with the right shape, and every tensor
  // of the file must be used. Throws std::runtime_error naming the file and the tensor.
  static WanVae load(const io::WeightSet& weights, const WanVaeLoadOptions& options = {});
  static WanVae load(const io::WeightSet& weights, const WanVaeConfig& config, const WanVaeLoadOptions& options = {});
  // Random weights with the golden files' scaling (benchmarks, shape and memory tests).
  static WanVae random(const WanVaeConfig& config, std::uint64_t seed, const WanVaeLoadOptions& options = {});

  const WanVaeConfig& config() const;
  at::ScalarType computeDtype() const;
  VaeGeometry geometry() const override;
  at::Device device() const override;
  std::uint64_t weightBytes() const override;
  std::vector<std::pair<std::string, at::Tensor>> namedParameters() const;
  // The normalisation: normalised = (μ − mean)/std per channel.
  std::vector<double> latentMean() const;
  std::vector<double> latentStd() const;
  void setLatentStatistics(const std::vector<double>& mean, const std::vector<double>& deviation);

  // Training. setTrainable(true) makes every parameter require grad; encodeMoments and decodeRaw
  // then build the autograd graph (they follow the caller's grad mode, unlike encode/decode).
  void setTrainable(bool trainable);
  // video [B, 3, T, H, W] in [−1, 1], T = 4k+1 → μ and log σ² (chunked and causal as encode()).
  WanVaeMoments encodeMoments(const at::Tensor& video) const;
  // Raw μ [B, z, T', h, w] → video [B, 3, 1+4(T'−1), 8h, 8w] float32, unclamped.
  at::Tensor decodeRaw(const at::Tensor& mu) const;

  // video [3, T, H, W] or [1, 3, T, H, W] in [−1, 1]; T = 4k+1 and H, W multiples of 8 (else
  // std::invalid_argument). Chunked as the reference: frame 0 alone, then 4 frames at a time.
  // Returns the normalised latent (μ − mean)/std, or the raw μ when normalise is false:
  // [z, (T−1)/4+1, H/8, W/8] float32.
  at::Tensor encode(const at::Tensor& video, bool normalise = true) const override;

  // latent [z, T', h, w] or [1, z, T', h, w] → video [3, 1+4(T'−1), 8h, 8w] float32.
  at::Tensor decode(const at::Tensor& latent, const VaeDecodeOptions& options = {}) const override;
  // The same, delivering frames to `sink` as they are decoded (see VaeFrameSink); nothing is
  // accumulated, so memory stays at one chunk's worth (untiled) or one tile's worth plus the
  // blended clip (tiled).
  void decode(const at::Tensor& latent, const VaeFrameSink& sink, const VaeDecodeOptions& options = {}) const override;
  // A stream for pushing latent frames one by one (untiled; clamp/normalised as in options).
  WanVaeDecodeStream decodeStream(const VaeDecodeOptions& options = {}) const;
  std::unique_ptr<VaeDecodeStream> openDecodeStream(const VaeDecodeOptions& options = {}) const override;

  ~WanVae() override;
  WanVae(WanVae&&) noexcept;
  WanVae& operator=(WanVae&&) noexcept;

 private:
  friend class WanVaeDecodeStream;
  struct Impl;
  explicit WanVae(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace shotchain::models
