#pragma once

#include <string>
#include <vector>

#include "resolve/resolved_shot.h"

namespace shotchain::interop {

// One shot as a ComfyUI API-format workflow of stock nodes.
struct ComfyShotWorkflow {
  std::string shotId;
  std::string json;                // {id: {class_type, inputs}}
  std::vector<std::string> notes;  // what stock ComfyUI cannot do of this shot (its continuity)
};

// Every enabled shot as it resolved (its steps, guidance, shift, negative prompt, LoRAs, experts' split), in the
// stock graph of its DiT family's ComfyUI words (models/family_knowledge.h): UNETLoader, CLIPLoader, VAELoader,
// ModelSamplingSD3, CLIPTextEncode ×2, the family's latent node (an empty latent, or an image latent with the
// shot's start image), KSampler, VAEDecode and the output (SaveAnimatedWEBP, or CreateVideo + SaveVideo). A
// two-expert set writes ComfyUI's two-expert template: two UNETLoader → ModelSamplingSD3 chains, two
// KSamplerAdvanced split at the shot's switch step, the family's image-to-video node for image-to-video experts.
// An SVI shot writes KJNodes' WanImageToVideoSVIPro (the anchor picture scaled and encoded; a continued shot's
// previous latents from a LoadLatent of what the previous shot's workflow saves with SaveLatent).
// The loaders name the files by their names inside the models folder (the family's stock names when the
// document names none; the demo model's file names for builtin:demo).
std::vector<ComfyShotWorkflow> exportComfyWorkflows(const Sequence& sequence,
                                                    const resolve::ResolvedSequence& resolved);

}  // namespace shotchain::interop
