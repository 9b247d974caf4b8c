#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "test_support.h"

namespace shotchain::testing {

// `from`, a safetensors file, written to `to` with a tokenizer model's bytes as the tensor "spiece_model"
// (uint8), as ComfyUI's text encoder files carry theirs.
inline void copyWithEmbeddedTokenizer(const std::filesystem::path& from, const std::filesystem::path& to,
                                      const std::filesystem::path& tokenizer) {
  const std::string file = readFile(from), spiece = readFile(tokenizer);
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(file[static_cast<std::size_t>(i)]);
  std::string header = file.substr(8, length);
  const std::string data = file.substr(8 + length);
  header.erase(header.find_last_not_of(' ') + 1);
  header.pop_back();  // the closing brace
  header.append(",\"spiece_model\":{\"dtype\":\"U8\",\"shape\":[").append(std::to_string(spiece.size()));
  header.append("],\"data_offsets\":[").append(std::to_string(data.size())).append(",");
  header.append(std::to_string(data.size() + spiece.size())).append("]}}");
  while (header.size() % 8 != 0) header += ' ';
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  writeFile(to, out + header + data + spiece);
}

// A ComfyUI-style models folder made of the golden tiny weights (the text encoder with an embedded tokenizer):
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
  copyWithEmbeddedTokenizer(golden("umt5_tiny.safetensors"), models / encoderSub / "umt5_tiny.safetensors",
                            sourceDir() / "resources" / "demo" / "tokenizer.model");
  writeFile(models / "vae" / "README.txt", "not weights");
}

inline std::string sequenceJson(const std::string& model,
                                const std::string& memory = R"({ "policy": "auto", "budget": null })") {
  std::string shots;
  for (int i = 0; i < 3; ++i) {
    shots += std::string(i ? "," : "") + R"({ "id": "s)" + std::to_string(i) +
             R"(", "name": "S", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 1,
                  "continuity": { "mode": ")" +
             (i == 0   ? "none"
              : i == 2 ? "latent_overlap"
                       : "latent") +
             R"(", "tag": "t", "overlap_latents": 1 } })";
  }
  return R"({ "schema": "shotchain.sequence/1", "name": "Plan test", "fps": 16, "model": )" + model +
         R"(, "sampler": { "steps": 4, "guidance": 4.0, "shift": 3.0, "solver": "euler" }, "memory": )" + memory +
         R"(, "shots": [)" + shots + "] }";
}

}  // namespace shotchain::testing
