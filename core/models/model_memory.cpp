#include "models/model_memory.h"

#include "io/weight_set.h"
#include "models/model_registry.h"

namespace shotchain::models {

std::shared_ptr<const DitMemoryModel> ditMemoryModel(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  return familyFor(weights, ModelRole::Dit, true).ditMemory(weights);
}

std::shared_ptr<const VaeMemoryModel> vaeMemoryModel(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  return familyFor(weights, ModelRole::Vae, true).vaeMemory(weights);
}

TextEncoderMemory textEncoderMemory(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  return familyFor(weights, ModelRole::TextEncoder, true).textEncoderMemory(weights);
}

}  // namespace shotchain::models
