#include "models/taehv/taehv_family.h"

#include <ATen/ATen.h>

#include "io/weight_set.h"
#include "models/preview_decoder.h"
#include "models/taehv/taehv_decoder.h"

namespace shotchain::models {
namespace {

class TaehvPreviewDecoder final : public PreviewDecoder {
 public:
  explicit TaehvPreviewDecoder(TaehvDecoder decoder) : decoder_(std::move(decoder)) {}
  std::int64_t latentChannels() const override { return decoder_.config().latentChannels; }
  at::Tensor decodeFrames(const at::Tensor& latent) const override {
    // A latent frame at a time: the activations of one frame's decode, whatever the shot's length.
    return decoder_.decode(latent, 1).to(at::kCPU);
  }

 private:
  TaehvDecoder decoder_;
};

std::string describe(const TaehvDetection& taehv) {
  return "TAEHV preview decoder (" + taehv.config.variant() + ", " + std::to_string(taehv.config.latentChannels) +
         " latent channels)";
}

std::optional<IdentifiedModel> identifyTaehv(const io::WeightSet& weights) {
  const TaehvDetection taehv = detectTaehv(weights);
  if (!taehv.isTaehv) return std::nullopt;
  return IdentifiedModel{"taehv", ModelRole::PreviewDecoder, describe(taehv),
                         taehv.problems.empty() ? std::string() : taehv.problems.front()};
}

FamilyInspection inspectTaehv(const io::WeightSet& weights) {
  const TaehvDetection taehv = detectTaehv(weights);
  const TaehvConfig& c = taehv.config;
  FamilyInspection out;
  out.lines.emplace_back("family", describe(taehv));
  out.lines.emplace_back("config", "patch " + std::to_string(c.patchSize) + ", widths " + std::to_string(c.widths[0]) +
                                       "/" + std::to_string(c.widths[1]) + "/" + std::to_string(c.widths[2]) + ", " +
                                       std::to_string(c.timeUpscale()) + " frames per latent frame" +
                                       (taehv.hasEncoder ? ", encoder present (not used)" : ""));
  for (const std::string& note : taehv.notes) out.lines.emplace_back("note", note);
  out.problems = taehv.problems;
  return out;
}

std::unique_ptr<PreviewDecoder> loadTaehv(const io::WeightSet& weights, c10::Device device) {
  TaehvLoadOptions options;
  options.device = device;
  // Previews need no float32: bfloat16 halves the memory and is several times faster on CPUs with bf16 units.
  options.computeDtype = at::kBFloat16;
  return std::make_unique<TaehvPreviewDecoder>(TaehvDecoder::load(weights, options));
}

std::int64_t taehvChannels(const io::WeightSet& weights) { return detectTaehv(weights).config.latentChannels; }

}  // namespace

const ModelFamilyRow& taehvFamily() {
  static const ModelFamilyRow row{.name = "taehv",
                                  .role = ModelRole::PreviewDecoder,
                                  .identify = identifyTaehv,
                                  .loadPreviewDecoder = loadTaehv,
                                  .previewLatentChannels = taehvChannels,
                                  .inspect = inspectTaehv};
  return row;
}

}  // namespace shotchain::models
