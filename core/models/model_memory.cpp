#include "models/model_memory.h"

#include <stdexcept>

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/model_family.h"
#include "models/wan_memory.h"

namespace shotchain::models {
namespace {

// The family of a file that must serve as `role`; a std::runtime_error naming the file otherwise.
ModelFamily usableFamily(const io::WeightSet& weights, ModelRole role) {
  const IdentifiedModel id = identifyModel(weights);
  if (id.role != role) throw std::runtime_error(weights.label() + ": not a " + roleName(role) + " of a known model family");
  if (!id.problem.empty()) throw std::runtime_error(weights.label() + ": " + id.problem);
  return id.family;
}

}  // namespace

std::shared_ptr<const DitMemoryModel> ditMemoryModel(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  switch (usableFamily(weights, ModelRole::Dit)) {
    case ModelFamily::WanDit:
      return wanDitMemory(detectWanConfig(weights).config, io::matmulLoadDtype(weights.find(kWanMatmulProbe), true));
    default: break;
  }
  throw std::logic_error(weights.label() + ": a DiT family without a memory model");
}

std::shared_ptr<const VaeMemoryModel> vaeMemoryModel(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  switch (usableFamily(weights, ModelRole::Vae)) {
    case ModelFamily::WanVae: return wanVaeMemory(detectWanVaeConfig(weights).config);
    default: break;
  }
  throw std::logic_error(weights.label() + ": a VAE family without a memory model");
}

TextEncoderMemory textEncoderMemory(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  switch (usableFamily(weights, ModelRole::TextEncoder)) {
    case ModelFamily::Umt5: {
      const Umt5Detection d = detectUmt5Config(weights);
      return umt5Memory(d.config, io::matmulLoadDtype(weights.find(umt5StoredName("blocks.0.ffn.fc1.weight", d.naming)), false));
    }
    default: break;
  }
  throw std::logic_error(weights.label() + ": a text encoder family without a memory model");
}

}  // namespace shotchain::models
