#pragma once

#include <filesystem>
#include <string>

#include "test_support.h"

namespace shotchain::testing {

// A ComfyUI-style models folder made of the golden tiny weights:
// <root>/models/{diffusion_models,vae,text_encoders}/…, plus a sequence document beside it.
inline void makeModelFolder(const std::filesystem::path& root, const char* ditSub = "diffusion_models",
                            const char* encoderSub = "text_encoders") {
  namespace fs = std::filesystem;
  const fs::path models = root / "models";
  fs::create_directories(models / ditSub);
  fs::create_directories(models / "vae");
  fs::create_directories(models / encoderSub);
  fs::copy_file(golden("wan_dit_tiny.safetensors"), models / ditSub / "wan_tiny.safetensors");
  fs::copy_file(golden("wan_vae_tiny.safetensors"), models / "vae" / "vae_tiny.safetensors");
  fs::copy_file(golden("umt5_tiny.safetensors"), models / encoderSub / "umt5_tiny.safetensors");
  writeFile(models / "vae" / "README.txt", "not weights");
}

inline std::string sequenceJson(const std::string& model, const std::string& memory = R"({ "policy": "auto", "budget": null })") {
  std::string shots;
  for (int i = 0; i < 3; ++i) {
    shots += std::string(i ? "," : "") + R"({ "id": "s)" + std::to_string(i) +
             R"(", "name": "S", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 1,
                  "continuity": { "mode": ")" + (i == 0 ? "none" : i == 2 ? "latent_overlap" : "latent") + R"(", "tag": "t", "overlap_latents": 1 } })";
  }
  return R"({ "schema": "shotchain.sequence/1", "name": "Plan test", "fps": 16, "model": )" + model +
         R"(, "sampler": { "steps": 4, "guidance": 4.0, "shift": 3.0, "solver": "euler" }, "memory": )" + memory +
         R"(, "shots": [)" + shots + "] }";
}

}  // namespace shotchain::testing
