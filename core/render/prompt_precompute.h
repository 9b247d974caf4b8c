#pragma once

// Prompts encoded ahead of a render (the studio does it in the background after an edit), into the embeddings
// the render reads, so that the render never loads the text encoder for them. Torch-free.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "render/render_options.h"
#include "sequence/sequence.h"

namespace shotchain::render {

class PromptEncoder;
// A text encoder kept between calls, held by code that must not see torch (its deleter is in core).
struct PromptEncoderDeleter {
  void operator()(PromptEncoder* encoder) const;
};
using KeptPromptEncoder = std::unique_ptr<PromptEncoder, PromptEncoderDeleter>;

struct PrecomputedPrompt {
  int shot = -1;          // the first enabled shot that conditions on it
  bool negative = false;  // its negative prompt
};

struct PromptPrecompute {
  std::vector<PrecomputedPrompt> encoded;  // in the order they were encoded
  int fromCache = 0;
  int loads = 0;  // text encoder loads this call made (0: every prompt was kept, or the encoder was loaded)
  double seconds = 0;
  bool stopped = false;  // `stop` said so before every prompt was encoded
};

// Encodes each prompt a render of the whole of `sequence` with `options` conditions on that its embeddings do
// not keep yet, and keeps it. `encoder`: the one kept from an earlier call, replaced when it encodes for other
// files or another device, loaded only when a prompt needs it, and left loaded. `stop` is asked before each
// prompt. Throws RenderError when the model set or the device cannot be used.
PromptPrecompute precomputePrompts(const Sequence& sequence, const RenderOptions& options, KeptPromptEncoder& encoder,
                                   const std::function<bool()>& stop);

}  // namespace shotchain::render
