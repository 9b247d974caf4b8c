#pragma once

#include <cstdint>

namespace shotchain::models {
class WanVae;
}

namespace shotchain::demo {

// The VAE alone on the path `latent` continuity takes at a cut: a held-out clip's last latent
// decoded as the next shot's first frame, against the clip's own decoded last frame (centroid
// distance in pixels). `lost`: no object found in that first frame.
struct VaeHandoffError {
  double medianPixels = 0;
  double meanPixels = 0;  // far above the median when a few clips put the object somewhere else
  int lost = 0;
  int clips = 0;  // clips whose decoded last frame shows the object
};

// Both ways the next shot can decode the handed latent: alone, as a lone first frame (a path no VAE
// is trained on), or after its predecessor latent, as the 4-frame chunk it was encoded as, keeping
// that chunk's last frame (what the studio does, continuity::Conditioning::decodePrefix).
struct VaeHandoffErrors {
  VaeHandoffError alone, afterPredecessor;
};

// Over `clips` held-out clips (seeds from `firstSeed`, which must be ≥ kHeldOutSeedStart).
VaeHandoffErrors measureVaeHandoff(const models::WanVae& vae, int clips, std::uint64_t firstSeed);

}  // namespace shotchain::demo
