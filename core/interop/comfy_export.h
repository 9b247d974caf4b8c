#pragma once

#include <functional>
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
  // Two experts (model.dit_high_noise): the step each shot's low-noise sampler starts at (the caller computes it
  // from the boundary and the shot's schedule, sampling::switchStepOf), and whether they are I2V experts
  // (WanImageToVideo with the shot's start image).
  std::function<int(const Shot&)> switchStep;
  bool imageToVideo = false;
};

// Every enabled shot as a stock Wan graph: UNETLoader, CLIPLoader (type wan), VAELoader, ModelSamplingSD3,
// CLIPTextEncode ×2, the latent (EmptyHunyuanLatentVideo, or Wan22ImageToVideoLatent for TI2V), KSampler,
// VAEDecode and the output (SaveAnimatedWEBP; CreateVideo + SaveVideo for TI2V). A two-expert set writes
// ComfyUI's Wan 2.2 14B template: two UNETLoader → ModelSamplingSD3 chains, two KSamplerAdvanced split at the
// shot's switch step, WanImageToVideo for I2V experts, CreateVideo + SaveVideo. The loaders name the files
// by their names inside the models folder (dit, vae, text_encoder as the document gives them; the demo
// model's file names for builtin:demo).
std::vector<ComfyShotWorkflow> exportComfyWorkflows(const Sequence& sequence, const ComfyExportOptions& options = {});

}  // namespace shotchain::interop
