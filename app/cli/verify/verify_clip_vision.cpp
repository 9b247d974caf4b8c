#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/clip_vit/clip_vision.h"

namespace shotchain::cli {

bool matchesClipVision(const io::WeightSet& weights, const std::string& source) {
  return source.find("clip.py") != std::string::npos || models::detectClipVisionConfig(weights).isClipVision;
}

// CLIP vision io files (golden README §11.1): "image" → "pixels" (the official preprocessing), "pixels" → "out"
// (the penultimate hidden state) and "out_all_blocks" (every block).
void verifyClipVision(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  const models::ClipVisionEncoder encoder =
      models::ClipVisionEncoder::load(weights, models::ClipVisionLoadOptions{at::kFloat, at::kCPU});
  const std::int64_t size = encoder.config().imageSize;
  if (file.find("image") && file.find("pixels"))
    report.compare("pixels (official preprocessing)",
                   models::clipPreprocess(file.tensor("image"), size, models::ClipPreprocessing::Official),
                   file.tensor("pixels"));
  if (!file.find("pixels")) return;
  const at::Tensor pixels = file.tensor("pixels");
  if (file.find("out")) report.compare("out (penultimate)", encoder.forward(pixels), file.tensor("out"));
  if (file.find("out_all_blocks"))
    report.compare("out_all_blocks", encoder.forward(pixels, encoder.config().numLayers),
                   file.tensor("out_all_blocks"));
}

}  // namespace shotchain::cli
