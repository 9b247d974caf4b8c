#pragma once

#include <string>
#include <vector>

#include "sequence/sequence.h"

namespace shotchain::interop {

// One shot as a ComfyUI API-format workflow of stock nodes.
struct ComfyShotWorkflow {
  std::string shotId;
  std::string json;                // {id: {class_type, inputs}}
  std::vector<std::string> notes;  // what stock ComfyUI cannot do of this shot (its continuity)
};

// Every enabled shot as a stock Wan text-to-video graph: UNETLoader, CLIPLoader (type wan),
// VAELoader, ModelSamplingSD3, CLIPTextEncode ×2, EmptyHunyuanLatentVideo, KSampler, VAEDecode and
// SaveAnimatedWEBP. The loaders name the files by their names inside the models folder (dit, vae,
// text_encoder as the document gives them; the demo model's file names for builtin:demo).
std::vector<ComfyShotWorkflow> exportComfyWorkflows(const Sequence& sequence);

}  // namespace shotchain::interop
