#pragma once

#include <cstdint>

namespace shotchain::models {

// Spatial tiling of a decode: the latent is cut into overlapping square tiles of `tile` latent
// pixels, each decoded on its own through all frames (so only one tile's caches and activations
// are alive), and blended linearly across the `overlap` (in latent pixels). tile = 0: no tiling.
struct VaeTiling {
  std::int64_t tile = 0;
  std::int64_t overlap = 0;
  bool enabled() const { return tile > 0; }
};

// Pixel frames T ↔ latent frames T': T = 1 + temporal·(T'−1); pixels = spatial · latent pixels.
struct VaeGeometry {
  std::int64_t latentChannels = 16;
  std::int64_t temporalFactor = 4;
  std::int64_t spatialFactor = 8;
  std::int64_t pixelFrames(std::int64_t latentFrames) const { return 1 + temporalFactor * (latentFrames - 1); }
};

}  // namespace shotchain::models
