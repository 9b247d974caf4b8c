#include "models/clip_vit/clip_vision_family.h"

#include "io/weight_set.h"
#include "models/clip_vit/clip_vision.h"
#include "models/clip_vit/clip_vision_names.h"
#include "models/image_encoder.h"
#include "models/model_memory.h"

namespace shotchain::models {
namespace {

// Wan's image encoder: the penultimate hidden state of the official preprocessing's picture.
class ClipImageEncoder final : public ImageEncoder {
 public:
  explicit ClipImageEncoder(ClipVisionEncoder encoder) : encoder_(std::move(encoder)) {}
  std::int64_t tokens() const override { return encoder_.config().tokens(); }
  at::Tensor encode(const at::Tensor& images) const override { return encoder_.encode(images); }

 private:
  ClipVisionEncoder encoder_;
};

std::unique_ptr<ImageEncoder> loadClipImageEncoder(const io::WeightSet& weights, c10::Device device) {
  ClipVisionLoadOptions options;
  options.device = device;
  return std::make_unique<ClipImageEncoder>(ClipVisionEncoder::load(weights, options));
}

// The tower's weights as stored (the encoder loads them so; a checkpoint's text tower and head are not loaded) and
// the activations of a shot's two pictures, a block at a time, counted in float32 whatever the weights' dtype.
EncoderMemory clipMemoryOf(const io::WeightSet& weights) {
  const ClipVisionDetection clip = detectClipVisionConfig(weights);
  const ClipVisionConfig& c = clip.config;
  EncoderMemory m;
  for (const io::WeightInfo& info : weights.weights())
    if (!clipVisionIgnorable(info.name, clip.naming)) m.weightBytes += info.bytes;
  const auto n = static_cast<std::uint64_t>(c.tokens()), d = static_cast<std::uint64_t>(c.dim),
             mlp = static_cast<std::uint64_t>(c.mlpDim), heads = static_cast<std::uint64_t>(c.numHeads);
  constexpr std::uint64_t kPictures = 2;
  m.activationBytes = kPictures * 4 * (n * (6 * d + 3 * mlp) + 3 * heads * n * n);
  return m;
}

// "CLIP vision H" for the ViT-H/14 tower of Wan 2.1 I2V / FLF2V (ComfyUI's clip_vision_h.safetensors).
std::string describe(const ClipVisionConfig& config) {
  return config.variant() == "ViT-H/14" ? "CLIP vision H (ViT-H/14)" : "CLIP vision, " + config.variant();
}

std::optional<IdentifiedModel> identifyClipVision(const io::WeightSet& weights) {
  const ClipVisionDetection clip = detectClipVisionConfig(weights);
  if (!clip.isClipVision) return std::nullopt;
  return IdentifiedModel{"clip_vision", ModelRole::ImageEncoder, describe(clip.config),
                         clip.problems.empty() ? std::string() : clip.problems.front()};
}

FamilyInspection inspectClipVision(const io::WeightSet& weights) {
  const ClipVisionDetection clip = detectClipVisionConfig(weights);
  const ClipVisionConfig& c = clip.config;
  FamilyInspection out;
  out.lines.emplace_back("family", describe(c));
  out.lines.emplace_back(
      "naming", clip.naming == ClipVisionNaming::OpenClip ? "open-clip (visual.*)" : "HF / ComfyUI (vision_model.*)");
  out.lines.emplace_back("config", "image " + std::to_string(c.imageSize) + ", patch " + std::to_string(c.patchSize) +
                                       ", width " + std::to_string(c.dim) + ", " + std::to_string(c.numLayers) +
                                       " blocks, " + std::to_string(c.numHeads) + " heads (from " + clip.headsSource +
                                       "), " + std::to_string(c.tokens()) + " tokens");
  out.problems = clip.problems;
  return out;
}

}  // namespace

const ModelFamilyRow& clipVisionFamily() {
  static const ModelFamilyRow row{.name = "clip_vision",
                                  .role = ModelRole::ImageEncoder,
                                  .identify = identifyClipVision,
                                  .loadImageEncoder = loadClipImageEncoder,
                                  .imageEncoderMemory = clipMemoryOf,
                                  .inspect = inspectClipVision};
  return row;
}

}  // namespace shotchain::models
