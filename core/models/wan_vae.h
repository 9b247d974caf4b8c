#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/wan_vae_config.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

struct WanVaeLoadOptions {
  // Dtype of the weights and activations. nullopt = float32 (the reference runs the VAE in fp32).
  std::optional<at::ScalarType> computeDtype;
  at::Device device = at::kCPU;
};

// Spatial tiling of the decode (wan21.md §2; issue 4): the latent is cut into overlapping square
// tiles of `tile` latent pixels, each decoded on its own through all frames (tile after tile, so
// only one tile's causal caches and activations are alive), and blended linearly across the
// `overlap` (in latent pixels) into the output. tile = 0: no tiling.
struct WanVaeTiling {
  std::int64_t tile = 0;
  std::int64_t overlap = 0;
  bool enabled() const { return tile > 0; }
};

struct WanVaeDecodeOptions {
  bool clamp = true;       // WanVAE.decode clamps to [−1, 1]; false gives WanVAE_.decode's raw output
  bool normalised = true;  // input is the normalised latent z (else the raw μ)
  WanVaeTiling tiling;
  // With no explicit tiling: bytes the decode may use beyond the weights (0 = unlimited). When the
  // full decode's estimate (wan_vae_memory.h) exceeds it, the tile is chosen from the estimate.
  std::uint64_t memoryBudget = 0;
};

// Frames [3, n, H, W] (float32, on the VAE's device) and the index of the first one in the clip.
// Untiled: called once per latent frame as soon as it is decoded (1 frame, then 4 at a time).
// Tiled: the same calls, made after the last tile (tiles run over the whole clip).
using WanVaeFrameSink = std::function<void(const at::Tensor& frames, std::int64_t firstFrame)>;

class WanVae;

// Incremental decoder: push normalised latent frames one at a time (as a sampler or a ring buffer
// produces them) and get their pixel frames back. Holds the causal caches (wan21.md §2.5), which
// are the only state carried between frames; memory does not grow with the clip length.
class WanVaeDecodeStream {
 public:
  // latentFrame [z, 1, h, w] or [z, h, w]; returns [3, 1, 8h, 8w] the first time, [3, 4, 8h, 8w] after.
  at::Tensor push(const at::Tensor& latentFrame);
  std::int64_t latentFramesIn() const;
  std::int64_t pixelFramesOut() const;
  void reset();  // start a new clip (clears the caches)

  ~WanVaeDecodeStream();
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

// The Wan 2.1 causal 3D VAE (wan21.md §2), inference only: encode returns μ only.
class WanVae {
 public:
  // Strict: every tensor the config needs must be present with the right shape, and every tensor
  // of the file must be used. Throws std::runtime_error naming the file and the tensor.
  static WanVae load(const io::WeightSet& weights, const WanVaeLoadOptions& options = {});
  static WanVae load(const io::WeightSet& weights, const WanVaeConfig& config, const WanVaeLoadOptions& options = {});
  // Random weights with the golden files' scaling (benchmarks, shape and memory tests).
  static WanVae random(const WanVaeConfig& config, std::uint64_t seed, const WanVaeLoadOptions& options = {});

  const WanVaeConfig& config() const;
  at::ScalarType computeDtype() const;
  at::Device device() const;
  std::uint64_t weightBytes() const;
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
  at::Tensor encode(const at::Tensor& video, bool normalise = true) const;

  // latent [z, T', h, w] or [1, z, T', h, w] → video [3, 1+4(T'−1), 8h, 8w] float32.
  at::Tensor decode(const at::Tensor& latent, const WanVaeDecodeOptions& options = {}) const;
  // The same, delivering frames to `sink` as they are decoded (see WanVaeFrameSink); nothing is
  // accumulated, so memory stays at one chunk's worth (untiled) or one tile's worth plus the
  // blended clip (tiled).
  void decode(const at::Tensor& latent, const WanVaeFrameSink& sink, const WanVaeDecodeOptions& options = {}) const;
  // A stream for pushing latent frames one by one (untiled; clamp/normalised as in options).
  WanVaeDecodeStream decodeStream(const WanVaeDecodeOptions& options = {}) const;

  ~WanVae();
  WanVae(WanVae&&) noexcept;
  WanVae& operator=(WanVae&&) noexcept;

 private:
  friend class WanVaeDecodeStream;
  struct Impl;
  explicit WanVae(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace shotchain::models
