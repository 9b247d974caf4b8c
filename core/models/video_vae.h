#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <ATen/core/Tensor.h>

#include "models/vae_geometry.h"

namespace shotchain::models {

struct VaeDecodeOptions {
  bool clamp = true;       // clamp to [−1, 1] (the reference's decode); false: the raw output
  bool normalised = true;  // input is the normalised latent z (else the raw μ)
  VaeTiling tiling;
  // With no explicit tiling: bytes the decode may use beyond the weights (0 = unlimited). When the
  // full decode's estimate exceeds it, the tile is chosen from the estimate.
  std::uint64_t memoryBudget = 0;
};

// Frames [3, n, H, W] (float32, on the VAE's device) and the index of the first one in the clip.
// Untiled: called as soon as each latent frame is decoded. Tiled: the same calls, after the last tile.
using VaeFrameSink = std::function<void(const at::Tensor& frames, std::int64_t firstFrame)>;

// Incremental decoder: latent frames pushed one at a time give their pixel frames back; memory does
// not grow with the clip.
class VaeDecodeStream {
 public:
  virtual ~VaeDecodeStream() = default;
  // latentFrame [z, 1, h, w] or [z, h, w] → [3, n, H, W].
  virtual at::Tensor push(const at::Tensor& latentFrame) = 0;
  virtual std::int64_t latentFramesIn() const = 0;
  virtual std::int64_t pixelFramesOut() const = 0;
  virtual void reset() = 0;
};

// A causal video VAE, whatever its family: what the handoff, the decode fallback and the renderer
// need of it. Implemented by WanVae.
class VideoVae {
 public:
  virtual ~VideoVae() = default;

  virtual VaeGeometry geometry() const = 0;
  virtual at::Device device() const = 0;
  virtual std::uint64_t weightBytes() const = 0;
  // video [3, T, H, W] or [1, 3, T, H, W] in [−1, 1] → latent [z, T', h, w] float32 (normalised
  // unless `normalise` is false).
  virtual at::Tensor encode(const at::Tensor& video, bool normalise = true) const = 0;
  // latent [z, T', h, w] → frames delivered to `sink` as they are decoded.
  virtual void decode(const at::Tensor& latent, const VaeFrameSink& sink,
                      const VaeDecodeOptions& options = {}) const = 0;
  // The same, collected: [3, T, H, W] float32.
  virtual at::Tensor decode(const at::Tensor& latent, const VaeDecodeOptions& options = {}) const = 0;
  virtual std::unique_ptr<VaeDecodeStream> openDecodeStream(const VaeDecodeOptions& options = {}) const = 0;
};

}  // namespace shotchain::models
