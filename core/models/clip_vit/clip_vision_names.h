#pragma once

#include <string>

#include "models/clip_vit/clip_vision.h"

namespace shotchain::models {

// The stored name of a tower tensor in `naming`. Tensors are named as in Wan's clip.py without "visual.":
// patch_embedding.weight, cls_embedding, pos_embedding, pre_norm.*, transformer.N.{norm1, norm2, attn.to_qkv,
// attn.proj, mlp.0, mlp.2}.*; the HF naming splits to_qkv into transformer.N.attn.{q, k, v}.*.
std::string clipVisionStoredName(const std::string& name, ClipVisionNaming naming);

// Tensors a CLIP checkpoint may hold beside the tower the encoder uses: the text tower, the post-norm, the head or
// projection, the logit scale, HF's position ids.
bool clipVisionIgnorable(const std::string& stored, ClipVisionNaming naming);

}  // namespace shotchain::models
