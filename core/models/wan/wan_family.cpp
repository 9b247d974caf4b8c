#include "models/wan/wan_family.h"

#include <algorithm>
#include <cctype>

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"

namespace shotchain::models {
namespace {

std::string firstOf(const std::vector<std::string>& problems) { return problems.empty() ? "" : problems.front(); }

std::optional<IdentifiedModel> identifyWanDit(const io::WeightSet& weights) {
  const WanDetection dit = detectWanConfig(weights);
  if (!dit.isWanDit || dit.config.modelType == "ti2v") return std::nullopt;                   // Wan 2.2's rows
  if (dit.config.modelType == "i2v" || dit.config.modelType == "flf2v") return std::nullopt;  // Wan 2.2 I2V, wan21_i2v
  std::string description = dit.config.family() + ", " + dit.config.variant();
  // Wan 2.2's T2V-A14B experts have the shapes of Wan 2.1 T2V 14B: nothing in the header tells them apart.
  if (dit.config.modelType == "t2v" && dit.config.variant() == "14B" && !dit.config.takesPerFrameTimesteps())
    description += " (or a Wan 2.2 T2V-A14B expert: the same shapes)";
  return IdentifiedModel{"wan_dit", ModelRole::Dit, description, firstOf(dit.problems)};
}

std::optional<IdentifiedModel> identifyWanVae(const io::WeightSet& weights) {
  const WanVaeDetection vae = detectWanVaeConfig(weights);
  if (!vae.isWanVae || vae.config.generation == 22) return std::nullopt;  // Wan 2.2's row
  return IdentifiedModel{"wan_vae", ModelRole::Vae, "Wan 2.1 VAE (" + vae.config.variant() + ")",
                         firstOf(vae.problems)};
}

// A file name as the name rules read it (wan_knowledge.h): lower-cased, '-' as '_'.
std::string normalisedName(const io::WeightSet& weights) {
  std::string n = weights.label();
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

std::optional<IdentifiedModel> identifyWan21I2v(const io::WeightSet& weights) {
  const WanDetection dit = detectWanConfig(weights);
  if (!dit.isWanDit || !dit.imageEmbedding) return std::nullopt;
  const std::string problem = firstOf(dit.problems);
  return IdentifiedModel{"wan21_i2v", ModelRole::Dit,
                         wan21I2vName(normalisedName(weights), dit.config) + ", " + dit.config.variant(), problem};
}

DitFacts wan21I2vFactsOf(const io::WeightSet& weights) {
  const WanConfig config = detectWanConfig(weights).config;
  return wanDitFacts(config, wan21I2vKnowledge(wan21I2vName(normalisedName(weights), config)));
}

std::unique_ptr<VideoDiffusionModel> loadWanDit(const io::WeightSet& weights, c10::Device device) {
  WanLoadOptions options;
  options.device = device;
  options.keepQuantised = true;
  return std::make_unique<WanModel>(WanModel::load(weights, options));
}

std::shared_ptr<const DitMemoryModel> wanDitMemoryOf(const io::WeightSet& weights) { return wanDitMemory(weights); }

std::unique_ptr<VideoVae> loadWanVae(const io::WeightSet& weights, c10::Device device) {
  WanVaeLoadOptions options;
  options.device = device;
  return std::make_unique<WanVae>(WanVae::load(weights, options));
}

std::shared_ptr<const VaeMemoryModel> wanVaeMemoryOf(const io::WeightSet& weights) {
  return wanVaeMemory(detectWanVaeConfig(weights).config);
}

DitFacts wanDitFactsOf(const io::WeightSet& weights) {
  return wanDitFacts(detectWanConfig(weights).config, wanT2vKnowledge());
}

FamilyInspection inspectWanDit(const io::WeightSet& weights) {
  const WanDetection wan = detectWanConfig(weights);
  FamilyInspection out;
  out.lines.emplace_back("family", "wan2.1 DiT (" + wan.config.modelType + "): " + wan.config.family());
  out.lines.emplace_back("variant", wan.problems.empty() ? wan.config.variant() : "unknown");
  out.lines.emplace_back("per-frame timesteps",
                         wan.config.takesPerFrameTimesteps()
                             ? "yes (diffusion forcing: a handed latent continues as a clean prefix)"
                             : "no (one timestep per clip: continuation across latent cuts is approximate)");
  out.lines.emplace_back("config (from " + wan.configSource + ")", wan.config.toJson());
  out.problems = wan.problems;
  return out;
}

VaeFacts wanVaeFactsOf(const io::WeightSet& weights) { return wanVaeFacts(detectWanVaeConfig(weights).config); }

std::string wanDitNames(const std::string& normalised) { return wanFamilyFromFileName(normalised); }

// While a sequence's files cannot be read, it is checked against Wan 2.1 T2V 1.3B with its VAE.
ModelSetFacts assumedWanSet() {
  ModelSetFacts facts;
  facts.assumed = true;
  facts.dit = wanDitFacts(WanConfig::preset("1.3b"), wanT2vKnowledge());
  facts.dit.family = "wan_dit";
  facts.vae = wanVaeFacts(WanVaeConfig());
  facts.vae.family = "wan_vae";
  facts.vae.description = "Wan 2.1 VAE";
  facts.vae.knowledge = &wanVaeKnowledge();
  return facts;
}

}  // namespace

DitFacts wanDitFacts(const WanConfig& config, const FamilyKnowledge& knowledge) {
  DitFacts facts;
  facts.familyName = config.family();
  facts.description = config.family() + ", " + config.variant();
  facts.variant = wanVariantId(config);
  facts.latentChannels = config.outDim;
  facts.patchFrames = config.patch[0];
  facts.patchSide = config.patch[1];
  facts.perFrameTimesteps = config.takesPerFrameTimesteps();
  facts.cleanFirstFrames = config.modelType == "ti2v";
  facts.causalBlockSize = config.causalBlockSize;
  facts.imageConditionChannels = config.imageConditionChannels();
  facts.firstLastFrame = facts.imageConditionChannels > 0;  // the mask has a channel per pixel frame
  facts.imageEmbeddingTokens = config.imageTokens();
  facts.imagePictures = config.imagePositionTokens > 0 ? 2 : config.hasImageEmbedding() ? 1 : 0;
  facts.contextLength = config.textLen;
  facts.parameters = config.parameterCount();
  facts.knowledge = &knowledge;
  return facts;
}

VaeFacts wanVaeFacts(const WanVaeConfig& config) {
  VaeFacts facts;
  facts.latentChannels = config.zDim;
  facts.temporalFactor = config.temporalFactor();
  facts.spatialFactor = config.spatialFactor();
  return facts;
}

FamilyInspection inspectWanVaeFile(const io::WeightSet& weights) {
  const WanVaeDetection vae = detectWanVaeConfig(weights);
  const WanVaeConfig& c = vae.config;
  FamilyInspection out;
  out.lines.emplace_back("family", std::string(c.generation == 22 ? "Wan 2.2" : "Wan 2.1") + " VAE");
  out.lines.emplace_back("variant", vae.problems.empty() ? c.variant() : "unknown");
  out.lines.emplace_back("latent", std::to_string(c.zDim) + " channels, " + std::to_string(c.spatialFactor()) +
                                       "× spatial, " + std::to_string(c.temporalFactor()) + "× temporal");
  out.lines.emplace_back("config (from " + vae.configSource + ")", c.toJson());
  out.problems = vae.problems;
  return out;
}

bool wanGgufKeepsUnquantised(const std::string& name) {
  for (const char* part : {"modulation", "patch_embedding.", "text_embedding.", "time_projection.", "time_embedding.",
                           "img_emb.", "head."})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

const ModelFamilyRow& wanDitFamily() {
  static const ModelFamilyRow row{.name = "wan_dit",
                                  .role = ModelRole::Dit,
                                  .identify = identifyWanDit,
                                  .loadDit = loadWanDit,
                                  .ditMemory = wanDitMemoryOf,
                                  .inspect = inspectWanDit,
                                  .knowledge = &wanT2vKnowledge(),
                                  .ditFacts = wanDitFactsOf,
                                  .familyFromFileName = wanDitNames,
                                  .assumed = assumedWanSet,
                                  .ggufKeepsUnquantised = wanGgufKeepsUnquantised,
                                  .ggufArchitecture = "wan"};
  return row;
}

const ModelFamilyRow& wan21I2vFamily() {
  static const ModelFamilyRow row{.name = "wan21_i2v",
                                  .role = ModelRole::Dit,
                                  .identify = identifyWan21I2v,
                                  .loadDit = loadWanDit,
                                  .ditMemory = wanDitMemoryOf,
                                  .inspect = inspectWanDit,
                                  .knowledge = &wan21I2vKnowledge(""),
                                  .ditFacts = wan21I2vFactsOf,
                                  .ggufKeepsUnquantised = wanGgufKeepsUnquantised,
                                  .ggufArchitecture = "wan"};
  return row;
}

const ModelFamilyRow& wanVaeFamily() {
  static const ModelFamilyRow row{.name = "wan_vae",
                                  .role = ModelRole::Vae,
                                  .identify = identifyWanVae,
                                  .loadVae = loadWanVae,
                                  .vaeMemory = wanVaeMemoryOf,
                                  .inspect = inspectWanVaeFile,
                                  .knowledge = &wanVaeKnowledge(),
                                  .vaeFacts = wanVaeFactsOf};
  return row;
}

}  // namespace shotchain::models
