#include "render/stream_checks.h"

#include <algorithm>
#include <memory>
#include <string>

#include "models/model_memory.h"
#include "render/renderer.h"
#include "sequence/continuity_modes.h"
#include "sequence/validation.h"
#include "sequence/shot_rules.h"

namespace shotchain::render {

void requireStreamableShots(const Sequence& sequence, const models::ModelFiles& files, int first, int last) {
  std::shared_ptr<const models::DitMemoryModel> dit;
  for (int i = first; i <= last; ++i) {
    const Shot& shot = sequence.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled || !streams(shot.continuity.mode)) continue;
    if (!dit) dit = models::ditMemoryModel(files.dit);
    const std::int64_t chunk = dit->causalBlockSize();
    if (chunk <= 0 || !dit->perFrameTimesteps())
      throw RenderError(shotPath(static_cast<std::size_t>(i), "continuity.mode"),
                        "stream needs a block-causal DiT that keeps a KV cache (the built-in demo model, or a causal Wan "
                        "checkpoint such as Self-Forcing's); " + dit->family() + " attends to the whole clip: choose latent");
    const bool continues = predecessorByTag(sequence, static_cast<std::size_t>(i)) >= 0;
    const int generated = shot.latentFrames() - (continues ? 1 : 0);
    if (generated < 1 || generated % chunk != 0) {
      const std::int64_t low = std::max<std::int64_t>(1, generated / chunk) * chunk + (continues ? 1 : 0);
      throw RenderError(shotPath(static_cast<std::size_t>(i), "frames"),
                        std::to_string(shot.frames) + " frames give " + std::to_string(generated) + " new latent frames" +
                            (continues ? " (the first frame repeats the previous shot's last)" : "") +
                            ", not whole chunks of " + std::to_string(chunk) + ": try " + std::to_string(1 + 4 * (low - 1)) +
                            " or " + std::to_string(1 + 4 * (low + chunk - 1)) + " frames");
    }
  }
}

}  // namespace shotchain::render
