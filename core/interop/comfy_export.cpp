#include "interop/comfy_export.h"

#include <filesystem>

#include <nlohmann/json.hpp>

namespace shotchain::interop {
namespace {

using Json = nlohmann::json;

std::string fileName(const std::string& path, const char* fallback) {
  return path.empty() ? fallback : std::filesystem::path(path).filename().string();
}

Json link(int node, int slot = 0) { return Json::array({std::to_string(node), slot}); }

Json node(const char* type, Json inputs, const std::string& title) {
  return {{"class_type", type}, {"inputs", std::move(inputs)}, {"_meta", {{"title", title}}}};
}

// The Wan 2.2 14B template's second half: the high-noise expert's loader and shift (nodes 13, 14), the
// latent (WanImageToVideo for I2V experts, whose outputs carry the prompts), the two KSamplerAdvanced (15 high,
// 8 low) split at the switch step, then decode and CreateVideo + SaveVideo.
// LoraLoaderModelOnly nodes firstId, firstId + 1, … after node `from`, one a LoRA whose expert is not `skip`;
// returns the node the model comes from after them.
int loraChain(Json& g, int from, int firstId, const std::vector<LoraRef>& loras, const std::string& skip, const char* title) {
  int model = from;
  for (const LoraRef& lora : loras) {
    if (!skip.empty() && lora.expert == skip) continue;
    const int id = model == from ? firstId : model + 1;
    g[std::to_string(id)] = node("LoraLoaderModelOnly",
                                 {{"lora_name", std::filesystem::path(lora.file).filename().string()},
                                  {"strength_model", lora.strength},
                                  {"model", link(model)}},
                                 title);
    model = id;
  }
  return model;
}

void addExpertPair(Json& g, ComfyShotWorkflow& w, const Shot& shot, const SequenceSettings& s, const ComfyExportOptions& options) {
  const int steps = shot.steps.value_or(s.sampler.steps);
  const int split = options.switchStep ? options.switchStep(shot) : steps / 2;
  const double shift = shot.shift.value_or(s.sampler.shift);
  const double guidance = shot.guidance.value_or(s.sampler.guidance);
  g["13"] = node("UNETLoader", {{"unet_name", fileName(s.model.ditHighNoise, "")}, {"weight_dtype", "default"}},
                 "Load Diffusion Model (high noise)");
  const int model = loraChain(g, 13, 40, shot.loras ? *shot.loras : s.loras, "low", "LoRA (high noise)");
  g["14"] = node("ModelSamplingSD3", {{"shift", shift}, {"model", link(model)}}, "ModelSamplingSD3 (high noise)");
  Json positive = link(5), negative = link(6), latent = link(7);
  if (options.imageToVideo) {
    Json inputs = {{"width", shot.width}, {"height", shot.height}, {"length", shot.frames}, {"batch_size", 1},
                   {"positive", link(5)}, {"negative", link(6)}, {"vae", link(3)}};
    if (!shot.startImage.empty()) {
      g["11"] = node("LoadImage", {{"image", fileName(shot.startImage, "")}}, "Start image");
      inputs["start_image"] = link(11);
      w.notes.push_back("copy " + shot.startImage + " into ComfyUI's input folder");
    }
    g["7"] = node("WanImageToVideo", inputs, "WanImageToVideo");
    positive = link(7, 0);
    negative = link(7, 1);
    latent = link(7, 2);
  }
  const auto sampler = [&](int model, const Json& from, int start, int end, bool first, double cfg, const std::string& title) {
    return node("KSamplerAdvanced",
                {{"add_noise", first ? "enable" : "disable"},
                 {"noise_seed", first ? shot.seed : 0},
                 {"steps", steps},
                 {"cfg", cfg},
                 {"sampler_name", s.sampler.solver == Solver::Euler ? "euler" : "uni_pc"},
                 {"scheduler", "simple"},
                 {"start_at_step", start},
                 {"end_at_step", end},
                 {"return_with_leftover_noise", first ? "enable" : "disable"},
                 {"model", link(model)},
                 {"positive", positive},
                 {"negative", negative},
                 {"latent_image", from}},
                title);
  };
  g["15"] = sampler(14, latent, 0, split, true,
                    shot.guidanceHighNoise.value_or(s.sampler.guidanceHighNoise.value_or(guidance)), shot.displayName());
  g["8"] = sampler(4, link(15), split, 10000, false, guidance, shot.displayName() + " (low noise)");
  g["9"] = node("VAEDecode", {{"samples", link(8)}, {"vae", link(3)}}, "VAE Decode");
  g["10"] = node("CreateVideo", {{"fps", s.fps}, {"images", link(9)}}, "Create Video");
  g["12"] = node("SaveVideo", {{"filename_prefix", "shotchain/" + shot.id}, {"format", "auto"}, {"codec", "auto"}, {"video", link(10)}},
                 "Save Video");
}

}  // namespace

std::vector<ComfyShotWorkflow> exportComfyWorkflows(const Sequence& sequence, const ComfyExportOptions& options) {
  const SequenceSettings& s = sequence.settings;
  const ModelSet& m = s.model;
  const bool builtin = m.isBuiltin();
  const bool ti2v = options.latentChannels == 48;
  const std::string dit =
      builtin ? "dit.safetensors" : fileName(m.dit, ti2v ? "wan2.2_ti2v_5B_fp16.safetensors" : "wan2.1_t2v_1.3B_fp16.safetensors");
  const std::string vae = builtin ? "vae.safetensors" : fileName(m.vae, ti2v ? "wan2.2_vae.safetensors" : "wan_2.1_vae.safetensors");
  const std::string text = builtin ? "text_encoder.safetensors" : fileName(m.textEncoder, "umt5_xxl_fp8_e4m3fn_scaled.safetensors");
  std::vector<ComfyShotWorkflow> out;
  for (const Shot& shot : sequence.shots) {
    if (!shot.enabled) continue;
    ComfyShotWorkflow w;
    w.shotId = shot.id;
    if (shot.continuity.mode != ContinuityMode::None)
      w.notes.push_back("continuity " + std::string(toString(shot.continuity.mode)) +
                        " has no stock ComfyUI node: this shot starts from noise there");
    if (builtin) w.notes.push_back("builtin:" + m.builtin + ": copy its files into ComfyUI's models folders under these names");
    Json g = Json::object();
    g["1"] = node("UNETLoader", {{"unet_name", dit}, {"weight_dtype", "default"}}, "Load Diffusion Model");
    g["2"] = node("CLIPLoader", {{"clip_name", text}, {"type", "wan"}}, "Load CLIP");
    g["3"] = node("VAELoader", {{"vae_name", vae}}, "Load VAE");
    // A LoRA for the high-noise expert sits on its own chain (addExpertPair).
    const int model = loraChain(g, 1, 20, shot.loras ? *shot.loras : s.loras, m.ditHighNoise.empty() ? "" : "high", "LoRA");
    g["4"] = node("ModelSamplingSD3", {{"shift", shot.shift.value_or(s.sampler.shift)}, {"model", link(model)}}, "ModelSamplingSD3");
    g["5"] = node("CLIPTextEncode", {{"text", shot.prompt}, {"clip", link(2)}}, "Positive");
    g["6"] = node("CLIPTextEncode", {{"text", shot.negativePrompt}, {"clip", link(2)}}, "Negative");
    const Json size = {{"width", shot.width}, {"height", shot.height}, {"length", shot.frames}, {"batch_size", 1}};
    if (ti2v && m.ditHighNoise.empty()) {
      Json latent = size;
      latent["vae"] = link(3);
      if (!shot.startImage.empty()) {
        g["11"] = node("LoadImage", {{"image", fileName(shot.startImage, "")}}, "Start image");
        latent["start_image"] = link(11);
        w.notes.push_back("copy " + shot.startImage + " into ComfyUI's input folder");
      }
      g["7"] = node("Wan22ImageToVideoLatent", latent, "Wan22ImageToVideoLatent");
    } else if (!options.imageToVideo || m.ditHighNoise.empty()) {
      if (!shot.startImage.empty())
        w.notes.push_back("start_image has no stock node for this model's graph: the shot starts from noise there");
      g["7"] = node("EmptyHunyuanLatentVideo", size, "Empty latent video");
    }
    if (!m.ditHighNoise.empty()) {
      addExpertPair(g, w, shot, s, options);
      w.json = g.dump(2);
      out.push_back(std::move(w));
      continue;
    }
    g["8"] = node("KSampler",
                  {{"seed", shot.seed},
                   {"steps", shot.steps.value_or(s.sampler.steps)},
                   {"cfg", shot.guidance.value_or(s.sampler.guidance)},
                   {"sampler_name", s.sampler.solver == Solver::Euler ? "euler" : "uni_pc"},
                   {"scheduler", "simple"},
                   {"denoise", 1.0},
                   {"model", link(4)},
                   {"positive", link(5)},
                   {"negative", link(6)},
                   {"latent_image", link(7)}},
                  shot.displayName());
    g["9"] = node("VAEDecode", {{"samples", link(8)}, {"vae", link(3)}}, "VAE Decode");
    if (ti2v) {
      g["10"] = node("CreateVideo", {{"fps", s.fps}, {"images", link(9)}}, "Create Video");
      g["12"] = node("SaveVideo",
                     {{"filename_prefix", "shotchain/" + shot.id}, {"format", "auto"}, {"codec", "auto"}, {"video", link(10)}},
                     "Save Video");
      w.json = g.dump(2);
      out.push_back(std::move(w));
      continue;
    }
    g["10"] = node("SaveAnimatedWEBP",
                   {{"filename_prefix", "shotchain/" + shot.id},
                    {"fps", s.fps},
                    {"lossless", false},
                    {"quality", 90},
                    {"method", "default"},
                    {"images", link(9)}},
                   "Save");
    w.json = g.dump(2);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace shotchain::interop
