#include "models/continuation_note.h"

namespace shotchain::models {

std::string approximateContinuationNote(const std::string& family) {
  return "continuation is approximate on this model: " + family +
         " takes one timestep for the whole clip, so a handed latent is held re-noised at every step and the frames "
         "right after a cut can wash out or shift colour (a model with per-frame timesteps "
         "holds it clean)";
}

std::string cleanFirstFrameContinuationNote(const std::string& family) {
  return "continuation on " + family +
         ": the handed latent is held clean at timestep 0 as the model holds a start image, but a `latent` handoff "
         "covers the previous shot's last four frames, not one picture; `vae_roundtrip` encodes its last frame as one "
         "picture, which is exactly what the model was trained on (one small encode, no decode of the whole shot)";
}

}  // namespace shotchain::models
