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

EncoderMemory textEncoderMemory(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  return familyFor(weights, ModelRole::TextEncoder, true).textEncoderMemory(weights);
}

EncoderMemory imageEncoderMemory(const std::filesystem::path& file) {
  const io::WeightSet weights = io::WeightSet::open(file);
  return familyFor(weights, ModelRole::ImageEncoder, true).imageEncoderMemory(weights);
}

}  // namespace shotchain::models
