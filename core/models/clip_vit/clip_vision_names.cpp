#include "models/clip_vit/clip_vision_names.h"

#include <array>
#include <utility>

namespace shotchain::models {

std::string clipVisionStoredName(const std::string& name, ClipVisionNaming naming) {
  if (naming == ClipVisionNaming::OpenClip) return "visual." + name;
  static const std::array<std::pair<const char*, const char*>, 4> embeddings{{
      {"patch_embedding.weight", "vision_model.embeddings.patch_embedding.weight"},
      {"cls_embedding", "vision_model.embeddings.class_embedding"},
      {"pos_embedding", "vision_model.embeddings.position_embedding.weight"},
      {"pre_norm.", "vision_model.pre_layrnorm."},  // sic
  }};
  for (const auto& [from, to] : embeddings)
    if (name.starts_with(from)) return to + name.substr(std::string(from).size());
  static const std::array<std::pair<const char*, const char*>, 8> layer{{
      {"norm1.", "layer_norm1."},
      {"norm2.", "layer_norm2."},
      {"attn.q.", "self_attn.q_proj."},
      {"attn.k.", "self_attn.k_proj."},
      {"attn.v.", "self_attn.v_proj."},
      {"attn.proj.", "self_attn.out_proj."},
      {"mlp.0.", "mlp.fc1."},
      {"mlp.2.", "mlp.fc2."},
  }};
  const std::string prefix = "transformer.";
  if (!name.starts_with(prefix)) return name;
  const std::size_t dot = name.find('.', prefix.size());
  const std::string index = name.substr(prefix.size(), dot - prefix.size());
  const std::string rest = name.substr(dot + 1);
  for (const auto& [from, to] : layer)
    if (rest.starts_with(from))
      return "vision_model.encoder.layers." + index + "." + to + rest.substr(std::string(from).size());
  return name;
}

bool clipVisionIgnorable(const std::string& stored, ClipVisionNaming naming) {
  if (naming == ClipVisionNaming::OpenClip)
    return !stored.starts_with("visual.") || stored.starts_with("visual.post_norm.") || stored == "visual.head" ||
           stored.starts_with("visual.head.");
  return !stored.starts_with("vision_model.") || stored.starts_with("vision_model.post_layernorm.") ||
         stored == "vision_model.embeddings.position_ids";
}

}  // namespace shotchain::models
