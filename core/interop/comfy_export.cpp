#include "interop/comfy_export.h"

#include <algorithm>
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

// A .gguf DiT is read in ComfyUI by ComfyUI-GGUF's loader; anything else by the stock one.
Json unetLoader(const std::string& file, const std::string& title, ComfyShotWorkflow& w) {
  if (!file.ends_with(".gguf")) return node("UNETLoader", {{"unet_name", file}, {"weight_dtype", "default"}}, title);
  const std::string note = "a .gguf DiT is read by UnetLoaderGGUF: install city96's ComfyUI-GGUF custom nodes";
  if (std::find(w.notes.begin(), w.notes.end(), note) == w.notes.end()) w.notes.push_back(note);
  return node("UnetLoaderGGUF", {{"unet_name", file}}, title);
}

const models::ComfyWords& wordsOf(const models::FamilyKnowledge* knowledge) {
  static const models::ComfyWords none;
  return knowledge ? knowledge->comfy : none;
}

const char* samplerName(const resolve::ResolvedShot& shot) {
  return shot.solver == Solver::Euler || shot.fewStep ? "euler" : "uni_pc";
}

// LoraLoaderModelOnly nodes firstId, firstId + 1, … after node `from`, one a LoRA that patches `expert`;
// returns the node the model comes from after them.
int loraChain(Json& g, int from, int firstId, const resolve::ResolvedShot& shot, resolve::LoraExpert skip,
              const char* title) {
  int model = from;
  for (const resolve::ResolvedLora& lora : shot.loras) {
    if (shot.experts && lora.expert == skip) continue;
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

void addStartImage(Json& g, Json& inputs, ComfyShotWorkflow& w, const resolve::ResolvedShot& shot) {
  g["11"] = node("LoadImage", {{"image", shot.startImage.filename().string()}}, "Start image");
  inputs["start_image"] = link(11);
  w.notes.push_back("copy " + shot.startImage.filename().string() + " into ComfyUI's input folder");
}

void addEndImage(Json& g, Json& inputs, ComfyShotWorkflow& w, const resolve::ResolvedShot& shot) {
  g["16"] = node("LoadImage", {{"image", shot.endImage.filename().string()}}, "End image");
  inputs["end_image"] = link(16);
  w.notes.push_back("copy " + shot.endImage.filename().string() + " into ComfyUI's input folder");
}

void addVideoOutput(Json& g, const resolve::ResolvedShot& shot, double fps) {
  g["10"] = node("CreateVideo", {{"fps", fps}, {"images", link(9)}}, "Create Video");
  g["12"] =
      node("SaveVideo",
           {{"filename_prefix", "shotchain/" + shot.id}, {"format", "auto"}, {"codec", "auto"}, {"video", link(10)}},
           "Save Video");
}

// The conditioning and latent a sampler takes: the prompts and the empty latent, or, for an image-to-video shot,
// the family's image-to-video node (first–last-frame when the shot ends on a picture) whose outputs carry the
// prompts, with the CLIP vision branch of a DiT that attends to image features.
struct ImageToVideoLinks {
  Json positive = link(5), negative = link(6), latent = link(7);
};

// An SVI shot: KJNodes' WanImageToVideoSVIPro with the anchor picture scaled to the shot and encoded, and the
// previous shot's latents from the file that shot's workflow saves (SaveLatent, node 35).
ImageToVideoLinks addSvi(Json& g, ComfyShotWorkflow& w, const resolve::ResolvedShot& shot,
                         const resolve::ResolvedSequence& resolved, const models::ComfyWords& dit) {
  const std::string anchor = shot.anchorImage.filename().string();
  g["30"] = node("LoadImage", {{"image", anchor}}, "SVI anchor");
  g["31"] = node("ImageScale",
                 {{"upscale_method", "lanczos"},
                  {"width", shot.width},
                  {"height", shot.height},
                  {"crop", "center"},
                  {"image", link(30)}},
                 "Scale anchor");
  g["32"] = node("VAEEncode", {{"pixels", link(31)}, {"vae", link(3)}}, "Encode anchor");
  Json inputs = {{"length", shot.frames},
                 {"motion_latent_count", std::max(shot.motionLatents, 1)},
                 {"anchor_samples", link(32)},
                 {"positive", link(5)},
                 {"negative", link(6)}};
  w.notes.push_back(std::string(dit.motionNode) + " is a custom node (ComfyUI-KJNodes); copy " + anchor +
                    " into ComfyUI's input folder");
  if (shot.motionLatents > 0 && shot.predecessor >= 0) {
    const std::string previous = resolved.shots[static_cast<std::size_t>(shot.predecessor)].id;
    g["33"] = node("LoadLatent", {{"latent", previous + ".latent"}}, "Previous shot's latents");
    inputs["prev_samples"] = link(33);
    w.notes.push_back("copy the latent file shot " + previous +
                      "'s workflow saves (output/latents) into ComfyUI's input folder as " + previous + ".latent");
  }
  g["7"] = node(dit.motionNode, inputs, "SVI 2.0 Pro");
  return {link(7, 0), link(7, 1), link(7, 2)};
}

void addLatentSave(Json& g, const resolve::ResolvedShot& shot) {
  g["35"] = node("SaveLatent", {{"filename_prefix", "latents/" + shot.id}, {"samples", link(8)}},
                 "Latents for the next SVI shot");
}

ImageToVideoLinks addImageToVideo(Json& g, ComfyShotWorkflow& w, const resolve::ResolvedShot& shot,
                                  const Sequence& sequence, const resolve::ResolvedSequence& resolved,
                                  const models::ComfyWords& dit) {
  ImageToVideoLinks out;
  if (shot.imageCondition.empty() || !*dit.imageToVideoNode) return out;
  if (shot.imageCondition == "svi" && *dit.motionNode) return addSvi(g, w, shot, resolved, dit);
  if (shot.imageCondition == "svi")
    w.notes.push_back(
        "continuity svi has no ComfyUI node for this model: the shot is written without its anchor and "
        "motion latents");
  Json inputs = {{"width", shot.width}, {"height", shot.height}, {"length", shot.frames}, {"batch_size", 1},
                 {"positive", link(5)}, {"negative", link(6)},   {"vae", link(3)}};
  if (shot.imageCondition == "start_image") addStartImage(g, inputs, w, shot);
  const bool firstLast = !shot.endImage.empty() && *dit.firstLastFrameNode;
  if (firstLast) addEndImage(g, inputs, w, shot);
  if (resolved.models.dit.imageEmbeddingTokens > 0 && !sequence.settings.model.imageEncoder.empty()) {
    g["17"] = node("CLIPVisionLoader", {{"clip_name", fileName(sequence.settings.model.imageEncoder, "")}},
                   "Load CLIP Vision");
    if (inputs.contains("start_image")) {
      g["18"] = node("CLIPVisionEncode", {{"crop", "none"}, {"clip_vision", link(17)}, {"image", link(11)}},
                     "CLIP Vision Encode (start)");
      inputs[firstLast ? "clip_vision_start_image" : "clip_vision_output"] = link(18);
    }
    if (firstLast && resolved.models.dit.imagePictures == 2) {
      g["19"] = node("CLIPVisionEncode", {{"crop", "none"}, {"clip_vision", link(17)}, {"image", link(16)}},
                     "CLIP Vision Encode (end)");
      inputs["clip_vision_end_image"] = link(19);
    }
  }
  const char* type = firstLast ? dit.firstLastFrameNode : dit.imageToVideoNode;
  g["7"] = node(type, inputs, type);
  out.positive = link(7, 0);
  out.negative = link(7, 1);
  out.latent = link(7, 2);
  return out;
}

// The two-expert template's second half: the high-noise expert's loader and shift (nodes 13, 14), the latent (the
// family's image-to-video node for image-to-video experts, whose outputs carry the prompts), the two
// KSamplerAdvanced (15 high, 8 low) split at the switch step, then decode and the video output.
void addExpertPair(Json& g, ComfyShotWorkflow& w, const resolve::ResolvedShot& shot, const Sequence& sequence,
                   const resolve::ResolvedSequence& resolved, const models::ComfyWords& dit) {
  const resolve::ResolvedExperts& experts = *shot.experts;
  const int split = experts.switchStep >= 0 ? experts.switchStep : experts.highSteps;
  g["13"] = unetLoader(fileName(sequence.settings.model.ditHighNoise, ""), "Load Diffusion Model (high noise)", w);
  const int model = loraChain(g, 13, 40, shot, resolve::LoraExpert::Low, "LoRA (high noise)");
  g["14"] = node("ModelSamplingSD3", {{"shift", shot.shift}, {"model", link(model)}}, "ModelSamplingSD3 (high noise)");
  const ImageToVideoLinks links = addImageToVideo(g, w, shot, sequence, resolved, dit);
  const Json &positive = links.positive, &negative = links.negative, &latent = links.latent;
  const auto sampler = [&](int from, const Json& input, int start, int end, bool first, double cfg,
                           const std::string& title) {
    return node("KSamplerAdvanced",
                {{"add_noise", first ? "enable" : "disable"},
                 {"noise_seed", first ? shot.seed : 0},
                 {"steps", shot.steps},
                 {"cfg", cfg},
                 {"sampler_name", samplerName(shot)},
                 {"scheduler", "simple"},
                 {"start_at_step", start},
                 {"end_at_step", end},
                 {"return_with_leftover_noise", first ? "enable" : "disable"},
                 {"model", link(from)},
                 {"positive", positive},
                 {"negative", negative},
                 {"latent_image", input}},
                title);
  };
  const std::string title = shot.name.empty() ? shot.id : shot.name;
  g["15"] = sampler(14, latent, 0, split, true, experts.highGuidance, title);
  g["8"] = sampler(4, link(15), split, 10000, false, shot.guidance, title + " (low noise)");
  g["9"] = node("VAEDecode", {{"samples", link(8)}, {"vae", link(3)}}, "VAE Decode");
  if (shot.imageCondition == "svi") addLatentSave(g, shot);
  addVideoOutput(g, shot, sequence.settings.fps);
}

ComfyShotWorkflow exportShot(const Sequence& sequence, const resolve::ResolvedSequence& resolved,
                             const resolve::ResolvedShot& shot) {
  const ModelSet& m = sequence.settings.model;
  const bool builtin = m.isBuiltin();
  const models::ComfyWords& dit = wordsOf(resolved.models.dit.knowledge);
  const std::string ditFile = builtin ? "dit.safetensors" : fileName(m.dit, dit.file);
  const std::string vae = builtin ? "vae.safetensors" : fileName(m.vae, wordsOf(resolved.models.vae.knowledge).file);
  const models::ComfyWords& text = wordsOf(resolved.models.textEncoder.knowledge);
  const std::string textFile = builtin ? "text_encoder.safetensors" : fileName(m.textEncoder, text.file);
  const std::string title = shot.name.empty() ? shot.id : shot.name;

  ComfyShotWorkflow w;
  w.shotId = shot.id;
  if (shot.settings.mode != ContinuityMode::None && shot.imageCondition != "svi")
    w.notes.push_back("continuity " + std::string(toString(shot.settings.mode)) +
                      " has no stock ComfyUI node: this shot starts from noise there");
  if (builtin)
    w.notes.push_back("builtin:" + m.builtin + ": copy its files into ComfyUI's models folders under these names");
  if (shot.fewStep)
    w.notes.push_back("its few-step schedule is written as " + std::to_string(shot.steps) +
                      " steps of the simple scheduler, which "
                      "ComfyUI spaces by itself");
  Json g = Json::object();
  g["1"] = unetLoader(ditFile, "Load Diffusion Model", w);
  g["2"] = node("CLIPLoader", {{"clip_name", textFile}, {"type", text.clipType}}, "Load CLIP");
  g["3"] = node("VAELoader", {{"vae_name", vae}}, "Load VAE");
  // A LoRA for the high-noise expert sits on its own chain (addExpertPair).
  const int model = loraChain(g, 1, 20, shot, resolve::LoraExpert::High, "LoRA");
  g["4"] = node("ModelSamplingSD3", {{"shift", shot.shift}, {"model", link(model)}}, "ModelSamplingSD3");
  g["5"] = node("CLIPTextEncode", {{"text", shot.prompt}, {"clip", link(2)}}, "Positive");
  g["6"] = node("CLIPTextEncode", {{"text", shot.uncondPrompt}, {"clip", link(2)}}, "Negative");
  const Json size = {{"width", shot.width}, {"height", shot.height}, {"length", shot.frames}, {"batch_size", 1}};
  if (dit.latentTakesStartImage && !shot.experts) {
    Json latent = size;
    latent["vae"] = link(3);
    if (!shot.startImage.empty()) addStartImage(g, latent, w, shot);
    g["7"] = node(dit.latentNode, latent, dit.latentNode);
  } else if (shot.imageCondition.empty() || !*dit.imageToVideoNode) {
    if (!shot.startImage.empty())
      w.notes.push_back("start_image has no stock node for this model's graph: the shot starts from noise there");
    g["7"] = node(dit.latentNode, size, "Empty latent video");
  }
  if (shot.experts) {
    addExpertPair(g, w, shot, sequence, resolved, dit);
    w.json = g.dump(2);
    return w;
  }
  const ImageToVideoLinks links = addImageToVideo(g, w, shot, sequence, resolved, dit);
  g["8"] = node("KSampler",
                {{"seed", shot.seed},
                 {"steps", shot.steps},
                 {"cfg", shot.guidance},
                 {"sampler_name", samplerName(shot)},
                 {"scheduler", "simple"},
                 {"denoise", 1.0},
                 {"model", link(4)},
                 {"positive", links.positive},
                 {"negative", links.negative},
                 {"latent_image", links.latent}},
                title);
  g["9"] = node("VAEDecode", {{"samples", link(8)}, {"vae", link(3)}}, "VAE Decode");
  if (shot.imageCondition == "svi") addLatentSave(g, shot);
  if (dit.videoOutput) {
    addVideoOutput(g, shot, sequence.settings.fps);
  } else {
    g["10"] = node("SaveAnimatedWEBP",
                   {{"filename_prefix", "shotchain/" + shot.id},
                    {"fps", sequence.settings.fps},
                    {"lossless", false},
                    {"quality", 90},
                    {"method", "default"},
                    {"images", link(9)}},
                   "Save");
  }
  w.json = g.dump(2);
  return w;
}

}  // namespace

std::vector<ComfyShotWorkflow> exportComfyWorkflows(const Sequence& sequence,
                                                    const resolve::ResolvedSequence& resolved) {
  std::vector<ComfyShotWorkflow> out;
  for (const resolve::ResolvedShot& shot : resolved.shots)
    if (shot.enabled) out.push_back(exportShot(sequence, resolved, shot));
  return out;
}

}  // namespace shotchain::interop
