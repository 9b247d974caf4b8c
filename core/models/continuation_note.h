#pragma once

#include <string>

namespace shotchain::models {

// The one line the plan, the report and the studio show when shots continue from their predecessor on
// a model that takes one timestep for the whole clip (Wan 2.1 T2V; `family` names it): the handed latent can only be held
// re-noised at each step's level, which the model never saw, so the frames after a cut are approximate.
std::string approximateContinuationNote(const std::string& family);

// The line for a model trained to continue from clean first latent frames (Wan 2.2 TI2V): what `latent`
// and `vae_roundtrip` each give it at a cut.
std::string cleanFirstFrameContinuationNote(const std::string& family);

}  // namespace shotchain::models
