#include "models/continuation_note.h"

namespace shotchain::models {

std::string approximateContinuationNote(const std::string& family) {
  return "continuation is approximate on this model: " + family +
         " takes one timestep for the whole clip, so a handed latent is held re-noised at every step and the frames "
         "right after a cut can wash out or shift colour (a model with per-frame timesteps, such as SkyReels-V2 DF, "
         "holds it clean)";
}

}  // namespace shotchain::models
