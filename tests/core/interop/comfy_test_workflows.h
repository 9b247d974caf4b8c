#pragma once

// ComfyUI workflows the importer's tests build on, in the API format.
#include <QString>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "interop/comfy_import.h"

namespace shotchain::testing {

inline nlohmann::json api(const char* type, nlohmann::json inputs) {
  return {{"class_type", type}, {"inputs", std::move(inputs)}};
}
inline nlohmann::json from(int node, int slot = 0) { return nlohmann::json::array({std::to_string(node), slot}); }

// Two shots in the API format with the seed pack's nodes: the first stores its latent under "circle",
// the second takes it through ZeroCopyLatentHandoff; one node nothing maps, one output node.
inline nlohmann::json seedPackWorkflow(const std::string& unet = "wan2.1_t2v_1.3B_fp16.safetensors") {
  nlohmann::json g = nlohmann::json::object();
  g["1"] = api("UNETLoader", {{"unet_name", unet}, {"weight_dtype", "default"}});
  g["2"] = api("CLIPLoader", {{"clip_name", "umt5_xxl_fp8_e4m3fn_scaled.safetensors"}, {"type", "wan"}});
  g["3"] = api("VAELoader", {{"vae_name", "wan_2.1_vae.safetensors"}});
  g["4"] = api("ZeroCopyVRAMPin", {{"model", from(1)}, {"enable_pinning", true}, {"tune_allocator", false}});
  g["5"] = api("ModelSamplingSD3", {{"shift", 3.0}, {"model", from(4)}});
  g["6"] = api("CLIPTextEncode", {{"text", "a red circle moving right on a black background"}, {"clip", from(2)}});
  g["7"] = api("CLIPTextEncode", {{"text", "blurry"}, {"clip", from(2)}});
  g["8"] = api("EmptyHunyuanLatentVideo", {{"width", 64}, {"height", 64}, {"length", 17}, {"batch_size", 1}});
  g["9"] = api("KSampler", {{"seed", 1001},
                            {"steps", 20},
                            {"cfg", 4.0},
                            {"sampler_name", "uni_pc"},
                            {"scheduler", "simple"},
                            {"denoise", 1.0},
                            {"model", from(5)},
                            {"positive", from(6)},
                            {"negative", from(7)},
                            {"latent_image", from(8)}});
  g["10"] = api("ZeroCopyLatentStore", {{"samples", from(9)}, {"buffer_tag", "circle"}});
  g["11"] = api("VAEDecode", {{"samples", from(9)}, {"vae", from(3)}});
  g["12"] = api("ZeroCopyLatentHandoff", {{"clip", from(2)},
                                          {"vae", from(3)},
                                          {"prompt", "a red circle moving down on a black background"},
                                          {"width", 64},
                                          {"height", 64},
                                          {"length", 17},
                                          {"buffer_tag", "circle"},
                                          {"continuity_mode", "zero_copy_latent_only"},
                                          {"blend_ratio", 0.5}});
  g["13"] = api("KSampler", {{"seed", 1002},
                             {"steps", 20},
                             {"cfg", 4.0},
                             {"sampler_name", "uni_pc"},
                             {"scheduler", "karras"},
                             {"denoise", 1.0},
                             {"model", from(5)},
                             {"positive", from(12, 0)},
                             {"negative", from(7)},
                             {"latent_image", from(12, 1)}});
  g["14"] = api("ZeroCopyLatentStore", {{"samples", from(13)}, {"buffer_tag", "circle"}});
  g["15"] = api("VAEDecode", {{"samples", from(13)}, {"vae", from(3)}});
  g["16"] = api("SaveAnimatedWEBP", {{"images", from(15)}, {"fps", 16}, {"filename_prefix", "shot"}});
  g["17"] =
      api("LoraLoaderModelOnly", {{"lora_name", "style.safetensors"}, {"strength_model", 0.8}, {"model", from(1)}});
  return g;
}

// The importer's message for `text` read as "wf.json", empty when it imports.
inline QString importErrorOf(const std::string& text) {
  try {
    interop::importComfyWorkflow(text, "wf.json");
  } catch (const std::runtime_error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace shotchain::testing
