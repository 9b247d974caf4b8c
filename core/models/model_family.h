#pragma once

#include <string>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// Every model family ShotChain can load is a row of the registry (model_registry.h; llama.cpp's
// architecture table, stable-diffusion.cpp's version detection): a new family is a folder under
// core/models/ with its classes behind the interfaces (video_diffusion_model.h, video_vae.h,
// text_encoder.h) and one line in model_registry.cpp. Nothing outside core/models names its classes.
enum class ModelRole { None, Dit, Vae, TextEncoder, ImageEncoder, PreviewDecoder };

struct IdentifiedModel {
  std::string family;  // the registry row's name ("wan_dit"); empty when no family recognised the file
  ModelRole role = ModelRole::None;
  std::string description;  // "Wan 2.1 T2V, 1.3B", "SkyReels-V2 DF, custom", "Wan 2.1 VAE (wan2.1)"
  std::string problem;      // why a file of this family cannot be used; empty when it can
};

// From the file's tensor names, shapes and metadata alone (nothing is read beyond the header).
IdentifiedModel identifyModel(const io::WeightSet& weights);

// "dit", "vae", "text_encoder" (document and folder vocabulary); "" for None.
const char* roleName(ModelRole role);

}  // namespace shotchain::models
