#pragma once

#include "sequence/sequence.h"

namespace shotchain::continuity {

// The latent frame geometry of a shot's continuity mode when the shot has a predecessor: what the
// handoff (handoff.cpp) builds and what the memory plan (plan_request.cpp) reserves, from one place.
struct ContinuityGeometry {
  int heldLatents = 0;          // conditioning slots at the start of the sampled latent
  int extraLatents = 0;         // latent frames sampled beyond the shot's own latentFrames()
  int handedTailLatents = 0;    // tail latents of the previous shot read from the ring buffer
  int decodePrefixLatents = 0;  // previous-shot latents decoded ahead of the shot's own and dropped
};

// `latent` hands continuity.prefix_frames tail latents (default 1), `latent_overlap` its k behind a
// one-frame encode of the last frame, `blend` and `vae_roundtrip` one slot.
ContinuityGeometry continuityGeometry(const Continuity& continuity);

// continuity.prefix_frames with its default.
int prefixFrames(const Continuity& continuity);

}  // namespace shotchain::continuity
