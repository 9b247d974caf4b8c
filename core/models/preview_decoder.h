#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// A small decoder made to preview a DiT's latents as frames while it samples, whatever its family: TAEHV's
// taew2_1 / lighttaew2_1 (Wan 2.1 and Wan 2.2 14B latents) and taew2_2 / lighttaew2_2 (Wan 2.2 5B).
class PreviewDecoder {
 public:
  virtual ~PreviewDecoder() = default;
  virtual std::int64_t latentChannels() const = 0;
  // The DiT's normalised latent [C, T, h, w] (never modified) → float32 RGB frames [T_out, 3, H, W] in [0, 1] on
  // the CPU, the frames the VAE would decode from it.
  virtual at::Tensor decodeFrames(const at::Tensor& latent) const = 0;
};

}  // namespace shotchain::models
