#include <algorithm>
#include <stdexcept>

#include "io/safetensors_header.h"
#include "io/weight_set.h"
#include "models/taehv/taehv_decoder.h"
#include "models/taehv/taehv_layers.h"

namespace shotchain::models {
namespace {

using taehv::decoderTensor;

constexpr std::array<std::int64_t, 4> kBaseWidths{256, 128, 64, 64};

// The shape of `name`; empty, with a problem naming it, when it is missing or not a kernel×kernel convolution.
std::vector<std::uint64_t> convShape(const io::WeightSet& weights, const std::string& name, std::uint64_t kernel,
                                     std::vector<std::string>& problems) {
  const io::WeightInfo* info = weights.find(name);
  if (info == nullptr) {
    problems.push_back("tensor \"" + name + "\" is missing");
    return {};
  }
  if (info->shape.size() != 4 || info->shape[2] != kernel || info->shape[3] != kernel) {
    problems.push_back("tensor \"" + name + "\" has shape " + io::formatShape(info->shape) + ", not a " +
                       std::to_string(kernel) + "×" + std::to_string(kernel) + " convolution");
    return {};
  }
  return info->shape;
}

}  // namespace

std::int64_t TaehvConfig::timeUpscale() const {
  std::int64_t product = 1;
  for (const std::int64_t stride : timeStrides) product *= stride;
  return product;
}

std::int64_t TaehvConfig::spatialUpscale() const {
  std::int64_t factor = patchSize;
  for (const bool upscale : spaceUpscale) factor *= upscale ? 2 : 1;
  return factor;
}

std::int64_t TaehvConfig::outputFrames(std::int64_t latentFrames) const {
  return std::max<std::int64_t>(0, latentFrames * timeUpscale() - framesToTrim());
}

std::string TaehvConfig::variant() const {
  if (widths == kBaseWidths) {
    if (latentChannels == 16 && patchSize == 1) return "taew2_1";
    if (latentChannels == 48 && patchSize == 2) return "taew2_2";
    if (latentChannels == 32 && patchSize == 2) return "taehv1_5";
    if (latentChannels == 128 && patchSize == 4) return "taeltx";
  }
  if (*std::max_element(widths.begin(), widths.end()) <= 32) return "tiny";
  return "custom";
}

void TaehvConfig::check() const {
  if (latentChannels < 1) throw std::invalid_argument("a TAEHV decoder needs at least one latent channel");
  if (patchSize < 1) throw std::invalid_argument("the patch size must be positive");
  for (const std::int64_t width : widths)
    if (width < 1) throw std::invalid_argument("the decoder widths must be positive");
  for (const std::int64_t stride : timeStrides)
    if (stride != 1 && stride != 2) throw std::invalid_argument("a TGrow stride must be 1 or 2");
}

TaehvDetection detectTaehv(const io::WeightSet& weights) {
  TaehvDetection result;
  bool anyDecoder = false;
  for (const io::WeightInfo& info : weights.weights()) {
    result.hasEncoder = result.hasEncoder || info.name.starts_with("encoder.");
    anyDecoder = anyDecoder || info.name.starts_with("decoder.");
  }
  if (!anyDecoder) {
    result.problems.push_back(result.hasEncoder ? "a TAEHV encoder only: there are no decoder.* tensors"
                                                : "not a TAEHV decoder: there are no decoder.* tensors");
    return result;
  }
  // The base decoder starts with Clamp, which has no tensors; the super one with a 1×1 convolution.
  if (weights.find("decoder.0.weight") != nullptr) {
    result.problems.push_back(
        "a TAEHV \"super\" decoder (SuperMemBlock, as taew2_2_super / taehv1_5_super: decoder.0.weight is there): "
        "not supported");
    return result;
  }
  std::vector<std::string>& problems = result.problems;
  TaehvConfig& c = result.config;
  const auto first = convShape(weights, decoderTensor(taehv::kFirstConv, "weight"), 3, problems);
  if (first.empty()) return result;
  result.isTaehv = true;
  c.widths[0] = static_cast<std::int64_t>(first[0]);
  c.latentChannels = static_cast<std::int64_t>(first[1]);
  for (int stage = 0; stage < taehv::kStages; ++stage) {
    const std::string growName = decoderTensor(taehv::tGrowLayer(stage), "conv.weight");
    const auto grow = convShape(weights, growName, 1, problems);
    const auto width = static_cast<std::uint64_t>(c.widths[static_cast<std::size_t>(stage)]);
    if (!grow.empty()) {
      if (grow[1] != width || grow[0] % width != 0 || (grow[0] != width && grow[0] != 2 * width))
        problems.push_back("tensor \"" + growName + "\" has shape " + io::formatShape(grow) +
                           ": not a TGrow of stride 1 or 2 for width " + std::to_string(width));
      else
        c.timeStrides[static_cast<std::size_t>(stage)] = static_cast<std::int64_t>(grow[0] / width);
    }
    const std::string convName = decoderTensor(taehv::stageConvLayer(stage), "weight");
    const auto conv = convShape(weights, convName, 3, problems);
    if (conv.empty()) return result;
    if (conv[1] != width) {
      problems.push_back("tensor \"" + convName + "\" has shape " + io::formatShape(conv) + " but its input is " +
                         std::to_string(width) + " channels wide");
      return result;
    }
    c.widths[static_cast<std::size_t>(stage) + 1] = static_cast<std::int64_t>(conv[0]);
  }
  const std::string outputName = decoderTensor(taehv::kOutputConv, "weight");
  const auto output = convShape(weights, outputName, 3, problems);
  if (output.empty()) return result;
  std::int64_t patch = 1;
  while (3 * patch * patch < static_cast<std::int64_t>(output[0])) ++patch;
  if (3 * patch * patch != static_cast<std::int64_t>(output[0]) ||
      output[1] != static_cast<std::uint64_t>(c.widths[3])) {
    problems.push_back("tensor \"" + outputName + "\" has shape " + io::formatShape(output) +
                       ": not an RGB output of 3·p² channels from " + std::to_string(c.widths[3]));
    return result;
  }
  c.patchSize = patch;
  if (c.latentChannels == 24 && c.patchSize == 2)
    problems.push_back("24 latent channels and patch 2 (TAEH3): its chunked decode is not implemented");
  if (c.latentChannels == 32)
    result.notes.push_back(
        "32 latent channels (Hunyuan Video 1.5): the official taehv.py decodes with ReLU, ComfyUI and LightX2V "
        "(lighttaehy1_5) with LeakyReLU(0.2); ReLU is assumed");
  try {
    c.check();
  } catch (const std::invalid_argument& error) {
    problems.push_back(error.what());
  }
  return result;
}

}  // namespace shotchain::models
