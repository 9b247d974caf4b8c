#include "models/model_loading.h"

#include <stdexcept>

#include "io/weight_set.h"
#include "models/model_family.h"
#include "models/umt5_text_encoder.h"
#include "models/wan_model.h"
#include "models/wan_vae.h"

namespace shotchain::models {
namespace {

// The file's family, or a std::runtime_error naming the file when it is not a `role` ShotChain knows.
ModelFamily familyOf(const io::WeightSet& weights, ModelRole role) {
  const IdentifiedModel id = identifyModel(weights);
  if (id.role != role)
    throw std::runtime_error(weights.label() + ": not a " + roleName(role) + " of a model family ShotChain knows" +
                             (id.role == ModelRole::None ? std::string() : std::string(" (it is a ") + roleName(id.role) + ")"));
  return id.family;
}

}  // namespace

std::unique_ptr<VideoDiffusionModel> loadVideoDiffusionModel(const ModelFiles& files, c10::Device device) {
  const io::WeightSet weights = io::WeightSet::open(files.dit);
  switch (familyOf(weights, ModelRole::Dit)) {
    case ModelFamily::WanDit: {
      WanLoadOptions options;
      options.device = device;
      return std::make_unique<WanModel>(WanModel::load(weights, options));
    }
    default: break;
  }
  throw std::logic_error(weights.label() + ": a DiT family without a loader");
}

std::unique_ptr<VideoVae> loadVideoVae(const ModelFiles& files, c10::Device device) {
  const io::WeightSet weights = io::WeightSet::open(files.vae);
  switch (familyOf(weights, ModelRole::Vae)) {
    case ModelFamily::WanVae: {
      WanVaeLoadOptions options;
      options.device = device;
      return std::make_unique<WanVae>(WanVae::load(weights, options));
    }
    default: break;
  }
  throw std::logic_error(weights.label() + ": a VAE family without a loader");
}

std::unique_ptr<TextEncoder> loadTextEncoder(const ModelFiles& files, c10::Device device) {
  {
    const io::WeightSet weights = io::WeightSet::open(files.textEncoder);
    if (familyOf(weights, ModelRole::TextEncoder) != ModelFamily::Umt5)
      throw std::logic_error(weights.label() + ": a text encoder family without a loader");
  }
  Umt5TextEncoderOptions options;
  options.model.device = device;
  // The DiT takes at most text_len context rows: tokenize to that length.
  options.textLen = static_cast<std::size_t>(detectWanConfig(io::WeightSet::open(files.dit)).config.textLen);
  options.tokenizer = files.tokenizer;
  return std::make_unique<Umt5TextEncoder>(Umt5TextEncoder::load(files.textEncoder, options));
}

}  // namespace shotchain::models
