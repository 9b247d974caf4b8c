#include <cmath>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/strict_json.h"
#include "io/weight_set.h"
#include "models/clip_vit/clip_vision.h"
#include "models/clip_vit/clip_vision_names.h"

namespace shotchain::models {
namespace {

using Json = nlohmann::json;

// The head count of the published CLIP vision towers, by width (ViT-B 768/12, ViT-L 1024/16, ViT-H 1280/16,
// ViT-bigG 1664/16).
std::int64_t publishedHeads(std::int64_t dim) {
  static const std::map<std::int64_t, std::int64_t> heads{{768, 12}, {1024, 16}, {1280, 16}, {1664, 16}};
  const auto found = heads.find(dim);
  return found == heads.end() ? 0 : found->second;
}

// "num_heads" (open-clip / the golden files) or "num_attention_heads" (HF) of a metadata "config"; 0 when absent.
std::int64_t metadataHeads(const io::WeightSet& weights, std::vector<std::string>& problems) {
  const auto meta = weights.metadata().find("config");
  if (meta == weights.metadata().end()) return 0;
  Json json;
  try {
    json = io::parseJsonChecked<Json>(meta->second, io::kMaxJsonDepth);
  } catch (const io::JsonRefused& error) {
    problems.push_back(std::string("metadata config: not valid JSON: ") + error.what());
    return 0;
  }
  for (const char* key : {"num_heads", "num_attention_heads"}) {
    if (!json.is_object() || !json.contains(key)) continue;
    if (!json[key].is_number_integer() || json[key].get<std::int64_t>() <= 0) {
      problems.push_back(std::string("metadata config: \"") + key + "\" must be a positive integer");
      return 0;
    }
    return json[key].get<std::int64_t>();
  }
  return 0;
}

}  // namespace

std::string ClipVisionConfig::variant() const {
  if (dim == 1280 && numLayers == 32 && numHeads == 16 && patchSize == 14 && imageSize == 224 && mlpDim == 5120)
    return "ViT-H/14";
  if (dim <= 64 && numLayers <= 4) return "tiny";
  return "custom";
}

void ClipVisionConfig::check() const {
  if (dim <= 0 || numHeads <= 0 || dim % numHeads != 0)
    throw std::invalid_argument("dim " + std::to_string(dim) + " is not a multiple of the head count " +
                                std::to_string(numHeads));
  if (patchSize <= 0 || imageSize <= 0 || imageSize % patchSize != 0)
    throw std::invalid_argument("image size " + std::to_string(imageSize) + " is not a multiple of the patch size " +
                                std::to_string(patchSize));
  if (numLayers < 1 || mlpDim <= 0) throw std::invalid_argument("a CLIP vision tower needs at least one block");
}

ClipVisionDetection detectClipVisionConfig(const io::WeightSet& weights) {
  ClipVisionDetection result;
  const bool openClip = weights.find(clipVisionStoredName("patch_embedding.weight", ClipVisionNaming::OpenClip));
  const bool huggingFace = weights.find(clipVisionStoredName("patch_embedding.weight", ClipVisionNaming::HuggingFace));
  result.isClipVision = openClip || huggingFace;
  if (!result.isClipVision) {
    result.problems.push_back(
        "not a CLIP vision tower: no visual.patch_embedding.weight / "
        "vision_model.embeddings.patch_embedding.weight tensor");
    return result;
  }
  result.naming = openClip ? ClipVisionNaming::OpenClip : ClipVisionNaming::HuggingFace;
  ClipVisionConfig& c = result.config;
  auto shape = [&](const std::string& name) -> std::vector<std::uint64_t> {
    const io::WeightInfo* info = weights.find(clipVisionStoredName(name, result.naming));
    return info ? info->shape : std::vector<std::uint64_t>{};
  };
  const auto patch = shape("patch_embedding.weight");
  const auto position = shape("pos_embedding");
  const auto fc1 = shape("transformer.0.mlp.0.weight");
  if (patch.size() != 4 || patch[1] != 3 || patch[2] != patch[3]) {
    result.problems.push_back("the patch embedding is not a [dim, 3, p, p] convolution");
    return result;
  }
  c.dim = static_cast<std::int64_t>(patch[0]);
  c.patchSize = static_cast<std::int64_t>(patch[2]);
  if (position.empty() || position[position.size() - 2] < 2) {
    result.problems.push_back("the position embedding is missing");
    return result;
  }
  const auto side =
      static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(position[position.size() - 2] - 1))));
  if (static_cast<std::uint64_t>(side * side + 1) != position[position.size() - 2]) {
    result.problems.push_back("the position embedding's " + std::to_string(position[position.size() - 2]) +
                              " rows are not a square grid of patches plus the class token");
    return result;
  }
  c.imageSize = side * c.patchSize;
  if (fc1.size() == 2) c.mlpDim = static_cast<std::int64_t>(fc1[0]);
  c.numLayers = 0;
  while (
      weights.find(clipVisionStoredName("transformer." + std::to_string(c.numLayers) + ".norm1.weight", result.naming)))
    ++c.numLayers;
  c.numHeads = metadataHeads(weights, result.problems);
  result.headsSource = "metadata";
  if (c.numHeads == 0) {
    c.numHeads = publishedHeads(c.dim);
    result.headsSource = "width";
  }
  if (c.numHeads == 0) {
    result.problems.push_back("width " + std::to_string(c.dim) +
                              " is not a published CLIP tower's: the head count cannot be inferred "
                              "(store a config with num_heads in the metadata)");
    return result;
  }
  try {
    c.check();
  } catch (const std::invalid_argument& error) {
    result.problems.push_back(error.what());
  }
  return result;
}

}  // namespace shotchain::models
