#include "models/wan22/wan22_family.h"

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/wan/wan_family.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "models/wan/wan_vae_memory.h"

namespace shotchain::models {
namespace {

std::string firstProblem(const std::vector<std::string>& problems) { return problems.empty() ? "" : problems.front(); }

std::string ti2vDescription(const WanConfig& config) {
  const std::string variant = config.variant();
  return variant == "5B" ? "Wan 2.2 TI2V 5B" : "Wan 2.2 TI2V, " + variant;
}

std::optional<IdentifiedModel> identifyTi2v(const io::WeightSet& weights) {
  const WanDetection dit = detectWanConfig(weights);
  if (!dit.isWanDit || dit.config.modelType != "ti2v") return std::nullopt;
  return IdentifiedModel{"wan22_ti2v", ModelRole::Dit, ti2vDescription(dit.config), firstProblem(dit.problems)};
}

std::string i2vDescription(const WanConfig& config) {
  const std::string variant = config.variant();
  return variant == "A14B" ? "Wan 2.2 I2V A14B expert" : "Wan 2.2 I2V, " + variant;
}

std::optional<IdentifiedModel> identifyI2v(const io::WeightSet& weights) {
  const WanDetection dit = detectWanConfig(weights);
  if (!dit.isWanDit || dit.config.modelType != "i2v" || dit.imageEmbedding) return std::nullopt;
  return IdentifiedModel{"wan22_i2v", ModelRole::Dit, i2vDescription(dit.config), firstProblem(dit.problems)};
}

std::optional<IdentifiedModel> identifyWan22Vae(const io::WeightSet& weights) {
  const WanVaeDetection vae = detectWanVaeConfig(weights);
  if (!vae.isWanVae || vae.config.generation != 22) return std::nullopt;
  const std::string variant = vae.config.variant();
  return IdentifiedModel{"wan22_vae", ModelRole::Vae,
                         variant == "wan2.2" ? "Wan 2.2 VAE" : "Wan 2.2 VAE (" + variant + ")",
                         firstProblem(vae.problems)};
}

std::unique_ptr<VideoDiffusionModel> loadWan22Dit(const io::WeightSet& weights, c10::Device device) {
  WanLoadOptions options;
  options.device = device;
  options.keepQuantised = true;
  return std::make_unique<WanModel>(WanModel::load(weights, options));
}

std::shared_ptr<const DitMemoryModel> wan22DitMemory(const io::WeightSet& weights) { return wanDitMemory(weights); }

std::unique_ptr<VideoVae> loadWan22Vae(const io::WeightSet& weights, c10::Device device) {
  WanVaeLoadOptions options;
  options.device = device;
  return std::make_unique<WanVae>(WanVae::load(weights, options));
}

std::shared_ptr<const VaeMemoryModel> wan22VaeMemory(const io::WeightSet& weights) {
  return wanVaeMemory(detectWanVaeConfig(weights).config);
}

FamilyInspection inspectTi2v(const io::WeightSet& weights) {
  const WanDetection wan = detectWanConfig(weights);
  FamilyInspection out;
  out.lines.emplace_back("family", "wan2.2 DiT (ti2v): " + ti2vDescription(wan.config));
  out.lines.emplace_back("variant", wan.problems.empty() ? wan.config.variant() : "unknown");
  out.lines.emplace_back("latent channels", std::to_string(wan.config.inDim) + " (needs the Wan 2.2 VAE)");
  out.lines.emplace_back("clean first frames",
                         "yes (a start image or a handed latent is held at timestep 0: what TI2V was trained on)");
  out.lines.emplace_back("config (from " + wan.configSource + ")", wan.config.toJson());
  out.problems = wan.problems;
  return out;
}

FamilyInspection inspectI2v(const io::WeightSet& weights) {
  const WanDetection wan = detectWanConfig(weights);
  FamilyInspection out;
  out.lines.emplace_back("family", "wan2.2 DiT (i2v): " + i2vDescription(wan.config));
  out.lines.emplace_back("variant", wan.problems.empty() ? wan.config.variant() : "unknown");
  out.lines.emplace_back("latent channels",
                         std::to_string(wan.config.outDim) + " (the Wan 2.1 VAE's), plus " +
                             std::to_string(wan.config.inDim - wan.config.outDim) +
                             " input channels of image condition (frame mask and start image latent)");
  out.lines.emplace_back("expert",
                         "one of a high-noise / low-noise pair: the model set says which (model.dit_high_noise)");
  out.lines.emplace_back("config (from " + wan.configSource + ")", wan.config.toJson());
  out.problems = wan.problems;
  return out;
}

constexpr SizePreset kTi2vSizes[] = {
    {"1280×704 — Wan 2.2 TI2V 720p landscape", 1280, 704},
    {"704×1280 — Wan 2.2 TI2V 720p portrait", 704, 1280},
    {"64×64 — tiny test models", 64, 64},
};
constexpr SizePreset kI2vSizes[] = {
    {"832×480 — Wan 480p landscape", 832, 480},
    {"480×832 — Wan 480p portrait", 480, 832},
    {"1280×720 — Wan 720p landscape", 1280, 720},
    {"720×1280 — Wan 720p portrait", 720, 1280},
};

const FamilyKnowledge& ti2vKnowledge() {
  static const FamilyKnowledge knowledge{.name = "Wan 2.2 TI2V-5B",
                                         .defaultNegativePrompt = wanNegativePrompt(),
                                         .sizes = kTi2vSizes,
                                         .loraLayerAliases = wanLoraLayerAliases(),
                                         .loraTarget = "Wan DiT",
                                         .namedLoras = wanNamedLoras(),
                                         .comfy = {.file = "wan2.2_ti2v_5B_fp16.safetensors",
                                                   .latentNode = "Wan22ImageToVideoLatent",
                                                   .latentTakesStartImage = true,
                                                   .videoOutput = true}};
  return knowledge;
}

// wan/configs/wan_i2v_A14B.py: the I2V experts switch at 0.9.
const FamilyKnowledge& i2vKnowledge() {
  static const FamilyKnowledge knowledge{.name = "Wan 2.2 I2V-A14B experts",
                                         .defaultNegativePrompt = wanNegativePrompt(),
                                         .expertBoundary = 0.9,
                                         .sizes = kI2vSizes,
                                         .loraLayerAliases = wanLoraLayerAliases(),
                                         .loraTarget = "Wan DiT",
                                         .namedLoras = wanNamedLoras(),
                                         .comfy = {.file = "wan2.2_i2v_low_noise_14B_fp16.safetensors",
                                                   .latentNode = "EmptyHunyuanLatentVideo",
                                                   .imageToVideoNode = "WanImageToVideo",
                                                   .firstLastFrameNode = "WanFirstLastFrameToVideo",
                                                   .motionNode = "WanImageToVideoSVIPro",  // KJNodes' SVI 2.0 Pro
                                                   .videoOutput = true}};
  return knowledge;
}

const FamilyKnowledge& wan22VaeKnowledge() {
  static const FamilyKnowledge knowledge{.name = "Wan 2.2 VAE", .comfy = {.file = "wan2.2_vae.safetensors"}};
  return knowledge;
}

DitFacts ti2vFacts(const io::WeightSet& weights) {
  return wanDitFacts(detectWanConfig(weights).config, ti2vKnowledge());
}
DitFacts i2vFacts(const io::WeightSet& weights) { return wanDitFacts(detectWanConfig(weights).config, i2vKnowledge()); }
VaeFacts wan22VaeFacts(const io::WeightSet& weights) { return wanVaeFacts(detectWanVaeConfig(weights).config); }

std::string ti2vNames(const std::string& n) {
  return wan22FileName(n) && n.find("ti2v") != std::string::npos ? "Wan 2.2 TI2V-5B" : "";
}

std::string i2vNames(const std::string& n) {
  if (!wan22FileName(n) || n.find("i2v") == std::string::npos) return "";
  const bool high = n.find("high") != std::string::npos, low = n.find("low") != std::string::npos;
  return std::string("Wan 2.2 I2V-A14B") + (high ? " high-noise expert" : low ? " low-noise expert" : "");
}

}  // namespace

const ModelFamilyRow& wan22I2vFamily() {
  static const ModelFamilyRow row{.name = "wan22_i2v",
                                  .role = ModelRole::Dit,
                                  .identify = identifyI2v,
                                  .loadDit = loadWan22Dit,
                                  .ditMemory = wan22DitMemory,
                                  .inspect = inspectI2v,
                                  .knowledge = &i2vKnowledge(),
                                  .ditFacts = i2vFacts,
                                  .familyFromFileName = i2vNames,
                                  .ggufKeepsUnquantised = wanGgufKeepsUnquantised,
                                  .ggufArchitecture = "wan"};
  return row;
}

const ModelFamilyRow& wan22Ti2vFamily() {
  static const ModelFamilyRow row{.name = "wan22_ti2v",
                                  .role = ModelRole::Dit,
                                  .identify = identifyTi2v,
                                  .loadDit = loadWan22Dit,
                                  .ditMemory = wan22DitMemory,
                                  .inspect = inspectTi2v,
                                  .knowledge = &ti2vKnowledge(),
                                  .ditFacts = ti2vFacts,
                                  .familyFromFileName = ti2vNames,
                                  .ggufKeepsUnquantised = wanGgufKeepsUnquantised,
                                  .ggufArchitecture = "wan"};
  return row;
}

const ModelFamilyRow& wan22VaeFamily() {
  static const ModelFamilyRow row{.name = "wan22_vae",
                                  .role = ModelRole::Vae,
                                  .identify = identifyWan22Vae,
                                  .loadVae = loadWan22Vae,
                                  .vaeMemory = wan22VaeMemory,
                                  .inspect = inspectWanVaeFile,
                                  .knowledge = &wan22VaeKnowledge(),
                                  .vaeFacts = wan22VaeFacts};
  return row;
}

}  // namespace shotchain::models
