#pragma once

#include <cstdint>
#include <string>

#include <c10/core/ScalarType.h>

#include "models/wan/wan_vae.h"
#include "models/wan/wan_vae_config.h"

namespace shotchain::models {

// Bytes needed to decode one latent clip with WanVae::decode, beyond the weights
// (WanVae::weightBytes): what the memory planner reserves for the VAE decode.
struct WanVaeDecodeMemory {
  std::uint64_t cacheBytes = 0;       // causal caches: 2 frames per k3 conv input, constant over the clip
  std::uint64_t activationBytes = 0;  // the largest transient of one chunk (one tile when tiled)
  std::uint64_t clipBytes = 0;        // float32 frames held at once: the whole clip for decode() or a
                                      // tiled decode, one chunk when streamed untiled
  std::uint64_t inputBytes = 0;       // the latent after conv2
  std::uint64_t totalBytes() const { return cacheBytes + activationBytes + clipBytes + inputBytes; }
};

// Estimate for a latent [z, latentFrames, h, w] at `dtype`. `wholeClip`: the result is kept as one
// tensor (WanVae::decode returning a tensor) rather than streamed frame by frame. The model mirrors
// the implementation's allocation order; oneDNN reorder buffers of each convolution are counted
// (see wan_vae_memory.cpp). Checked against a measured peak in tests/vae (CPU).
WanVaeDecodeMemory estimateWanVaeDecode(const WanVaeConfig& config, std::int64_t latentFrames, std::int64_t height,
                                        std::int64_t width, at::ScalarType dtype, const VaeTiling& tiling = {},
                                        bool wholeClip = true);

// The tiling for a memory budget (bytes beyond the weights): no tiling when the full decode fits,
// else the largest square tile (overlap a quarter of it, at least 2 latent pixels) whose estimate
// fits, else the smallest tile tried (4 latent pixels, overlap 2).
VaeTiling chooseWanVaeTiling(const WanVaeConfig& config, std::int64_t latentFrames, std::int64_t height,
                             std::int64_t width, at::ScalarType dtype, std::uint64_t budgetBytes,
                             bool wholeClip = true);

}  // namespace shotchain::models
