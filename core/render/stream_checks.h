#pragma once

#include "models/model_files.h"
#include "sequence/sequence.h"

namespace shotchain::render {

// Before any work: every enabled stream shot in [first, last] needs a DiT that streams with a KV cache
// (block-causal, per-frame timesteps) and a length of whole chunks. Throws RenderError naming the shot's field.
void requireStreamableShots(const Sequence& sequence, const models::ModelFiles& files, int first, int last);

}  // namespace shotchain::render
