#include "models/model_family.h"

#include "models/model_registry.h"

namespace shotchain::models {

IdentifiedModel identifyModel(const io::WeightSet& weights) { return identifyFamily(weights).second; }

const char* roleName(ModelRole role) {
  switch (role) {
    case ModelRole::Dit:
      return "dit";
    case ModelRole::Vae:
      return "vae";
    case ModelRole::TextEncoder:
      return "text_encoder";
    case ModelRole::ImageEncoder:
      return "image_encoder";
    case ModelRole::PreviewDecoder:
      return "preview_decoder";
    case ModelRole::None:
      break;
  }
  return "";
}

}  // namespace shotchain::models
