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

struct ComfyExportOptions {
  // The DiT's latent channels (from its header, when the caller can read it): 48 is Wan 2.2 TI2V, whose
  // template has Wan22ImageToVideoLatent (with the shot's start image through LoadImage), CreateVideo and SaveVideo.
  std::int64_t latentChannels = 16;
};

// Every enabled shot as a stock Wan graph: UNETLoader, CLIPLoader (type wan), VAELoader, ModelSamplingSD3,
// CLIPTextEncode ×2, the latent (EmptyHunyuanLatentVideo, or Wan22ImageToVideoLatent for TI2V), KSampler,
// VAEDecode and the output (SaveAnimatedWEBP; CreateVideo + SaveVideo for TI2V). The loaders name the files
// by their names inside the models folder (dit, vae, text_encoder as the document gives them; the demo
// model's file names for builtin:demo).
std::vector<ComfyShotWorkflow> exportComfyWorkflows(const Sequence& sequence, const ComfyExportOptions& options = {});

}  // namespace shotchain::interop
