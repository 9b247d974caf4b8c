#include "models/model_memory.h"

#include <stdexcept>

#include "io/weight_set.h"
#include "models/model_family.h"
#include "models/wan_memory.h"

namespace shotchain::models {
namespace {

// The load dtype of a model's matmuls from the stored dtype of one of them, as the loaders choose it.
c10::ScalarType matmulDtype(const io::WeightInfo* probe, bool halfStaysHalf) {
  if (!probe) return c10::kFloat;
  switch (probe->dtype) {
    case io::DType::F16: return halfStaysHalf ? c10::kHalf : c10::kBFloat16;
    case io::DType::BF16:
    case io::DType::F8_E4M3:
    case io::DType::F8_E5M2: return c10::kBFloat16;
    case io::DType::F64: return c10::kDouble;
    default: return c10::kFloat;
  }
}

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
      return wanDitMemory(detectWanConfig(weights).config, matmulDtype(weights.find("blocks.0.ffn.0.weight"), true));
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
      return umt5Memory(d.config, matmulDtype(weights.find(umt5StoredName("blocks.0.ffn.fc1.weight", d.naming)), false));
    }
    default: break;
  }
  throw std::logic_error(weights.label() + ": a text encoder family without a memory model");
}

}  // namespace shotchain::models
