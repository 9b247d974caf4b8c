#pragma once

#include <cstdint>

namespace shotchain::models {
class WanVae;
}

namespace shotchain::demo {

// The VAE alone on the path `latent` continuity takes at a cut: a held-out clip's last latent
// decoded alone, as a shot's first frame, against the clip's own decoded last frame (centroid
// distance in pixels). `lost`: no object found in that first frame.
struct VaeHandoffError {
  double medianPixels = 0;
  double meanPixels = 0;  // far above the median when a few clips put the object somewhere else
  int lost = 0;
  int clips = 0;  // clips whose decoded last frame shows the object
};

// Over `clips` held-out clips (seeds from `firstSeed`, which must be ≥ kHeldOutSeedStart).
VaeHandoffError measureVaeHandoff(const models::WanVae& vae, int clips, std::uint64_t firstSeed);

}  // namespace shotchain::demo
