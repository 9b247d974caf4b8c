#include "models/model_loading.h"

#include "io/weight_set.h"
#include "models/image_encoder.h"
#include "models/model_memory.h"
#include "models/model_registry.h"

namespace shotchain::models {

std::unique_ptr<VideoDiffusionModel> loadVideoDiffusionModel(const ModelFiles& files, c10::Device device) {
  const io::WeightSet weights = io::WeightSet::open(files.dit);
  return familyFor(weights, ModelRole::Dit, false).loadDit(weights, device);
}

std::unique_ptr<VideoDiffusionModel> loadHighNoiseExpert(const ModelFiles& files, c10::Device device) {
  if (files.ditHighNoise.empty()) return nullptr;
  const io::WeightSet weights = io::WeightSet::open(files.ditHighNoise);
  return familyFor(weights, ModelRole::Dit, false).loadDit(weights, device);
}

std::unique_ptr<VideoVae> loadVideoVae(const ModelFiles& files, c10::Device device) {
  const io::WeightSet weights = io::WeightSet::open(files.vae);
  return familyFor(weights, ModelRole::Vae, false).loadVae(weights, device);
}

std::unique_ptr<TextEncoder> loadTextEncoder(const ModelFiles& files, c10::Device device) {
  const ModelFamilyRow& row = familyFor(io::WeightSet::open(files.textEncoder), ModelRole::TextEncoder, false);
  // The DiT takes at most its context length of rows: tokenize to that length.
  const auto maxTokens = static_cast<std::size_t>(ditMemoryModel(files.dit)->contextLength());
  return row.loadTextEncoder(files.textEncoder, files.tokenizer, device, maxTokens);
}

std::unique_ptr<ImageEncoder> loadImageEncoder(const ModelFiles& files, c10::Device device) {
  const io::WeightSet weights = io::WeightSet::open(files.imageEncoder);
  return familyFor(weights, ModelRole::ImageEncoder, false).loadImageEncoder(weights, device);
}

std::unique_ptr<PreviewDecoder> loadPreviewDecoder(const ModelFiles& files, c10::Device device) {
  if (files.previewDecoder.empty()) return nullptr;
  const io::WeightSet weights = io::WeightSet::open(files.previewDecoder);
  return familyFor(weights, ModelRole::PreviewDecoder, true).loadPreviewDecoder(weights, device);
}

}  // namespace shotchain::models
