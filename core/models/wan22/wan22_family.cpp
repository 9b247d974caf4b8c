#include "models/wan22/wan22_family.h"

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/wan/wan_family.h"
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

std::optional<IdentifiedModel> identifyWan22Vae(const io::WeightSet& weights) {
  const WanVaeDetection vae = detectWanVaeConfig(weights);
  if (!vae.isWanVae || vae.config.generation != 22) return std::nullopt;
  const std::string variant = vae.config.variant();
  return IdentifiedModel{"wan22_vae", ModelRole::Vae, variant == "wan2.2" ? "Wan 2.2 VAE" : "Wan 2.2 VAE (" + variant + ")",
                         firstProblem(vae.problems)};
}

std::unique_ptr<VideoDiffusionModel> loadTi2v(const io::WeightSet& weights, c10::Device device) {
  WanLoadOptions options;
  options.device = device;
  return std::make_unique<WanModel>(WanModel::load(weights, options));
}

std::shared_ptr<const DitMemoryModel> ti2vMemory(const io::WeightSet& weights) {
  return wanDitMemory(detectWanConfig(weights).config, io::matmulLoadDtype(weights.find(kWanMatmulProbe), true));
}

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

}  // namespace

const ModelFamilyRow& wan22Ti2vFamily() {
  static const ModelFamilyRow row{.name = "wan22_ti2v",
                                  .role = ModelRole::Dit,
                                  .identify = identifyTi2v,
                                  .loadDit = loadTi2v,
                                  .ditMemory = ti2vMemory,
                                  .inspect = inspectTi2v};
  return row;
}

const ModelFamilyRow& wan22VaeFamily() {
  static const ModelFamilyRow row{.name = "wan22_vae",
                                  .role = ModelRole::Vae,
                                  .identify = identifyWan22Vae,
                                  .loadVae = loadWan22Vae,
                                  .vaeMemory = wan22VaeMemory,
                                  .inspect = inspectWanVaeFile};
  return row;
}

}  // namespace shotchain::models
