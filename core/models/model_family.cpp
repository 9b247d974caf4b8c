#include "models/model_family.h"

#include "io/weight_set.h"
#include "models/umt5.h"
#include "models/wan_config.h"
#include "models/wan_vae_config.h"

namespace shotchain::models {
namespace {

std::string firstOf(const std::vector<std::string>& problems) { return problems.empty() ? "" : problems.front(); }

}  // namespace

IdentifiedModel identifyModel(const io::WeightSet& weights) {
  if (const WanDetection dit = detectWanConfig(weights); dit.isWanDit)
    return {ModelFamily::WanDit, ModelRole::Dit, dit.config.family() + ", " + dit.config.variant(), firstOf(dit.problems)};
  if (const WanVaeDetection vae = detectWanVaeConfig(weights); vae.isWanVae)
    return {ModelFamily::WanVae, ModelRole::Vae, "Wan 2.1 VAE (" + vae.config.variant() + ")", firstOf(vae.problems)};
  if (const Umt5Detection umt5 = detectUmt5Config(weights); umt5.isUmt5)
    return {ModelFamily::Umt5, ModelRole::TextEncoder, "UMT5 encoder", firstOf(umt5.problems)};
  return {};
}

const char* roleName(ModelRole role) {
  switch (role) {
    case ModelRole::Dit: return "dit";
    case ModelRole::Vae: return "vae";
    case ModelRole::TextEncoder: return "text_encoder";
    case ModelRole::None: break;
  }
  return "";
}

}  // namespace shotchain::models
