#pragma once

#include <exception>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "memory/memory_plan.h"
#include "memory/out_of_memory.h"
#include "models/video_vae.h"

namespace shotchain::memory {

// A fallback taken after an out-of-memory: never silent, it goes to the render report.
struct MemoryFallback {
  int shotIndex = -1;
  std::string stage;    // "decode"
  std::string failed;   // "untiled decode", "tiled decode (tile 32)"
  std::string chosen;   // "tiled decode (tile 16, overlap 4)"
  std::string error;    // the out-of-memory message, first line
  std::string message;  // one sentence for the report
};

struct DecodeOutcome {
  at::Tensor video;          // undefined when frames went to a sink
  models::VaeTiling tiling;  // the tiling of the decode that succeeded
  std::vector<MemoryFallback> fallbacks;
};

// VideoVae::decode with the plan's tiling (options.tiling when set, else the plan's tile when the plan
// decodes tiled). On out-of-memory: the failed attempt's tensors are released (outside the handler),
// the device cache is emptied, and the decode is retried tiled — the plan's tile first (or half the
// larger latent side when the plan has none), then halves down to 4 latent pixels; each retry is
// recorded. Out of memory at the smallest tile is rethrown. With a sink, frames go to it (a retry
// delivers them again from frame 0).
DecodeOutcome decodeWithFallback(const models::VideoVae& vae, const at::Tensor& latent,
                                 models::VaeDecodeOptions options, const MemoryPlan& plan, const std::string& device,
                                 int shotIndex = -1, const models::VaeFrameSink& sink = {});

}  // namespace shotchain::memory
