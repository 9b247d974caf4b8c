#pragma once

#include <memory>

#include <c10/core/Device.h>

#include "models/image_encoder.h"
#include "models/model_files.h"
#include "models/preview_decoder.h"
#include "models/text_encoder.h"
#include "models/video_diffusion_model.h"
#include "models/video_vae.h"

namespace shotchain::models {

// The one place where model files become a family's classes: the family is detected from the
// files' headers (model_family.h) and the matching implementation loaded onto `device`. Everything
// after this sees only the interfaces. Throw std::runtime_error naming the file.
std::unique_ptr<VideoDiffusionModel> loadVideoDiffusionModel(const ModelFiles& files, c10::Device device);
// The high-noise expert of a two-expert set (files.ditHighNoise); null when the set has one DiT.
std::unique_ptr<VideoDiffusionModel> loadHighNoiseExpert(const ModelFiles& files, c10::Device device);
std::unique_ptr<VideoVae> loadVideoVae(const ModelFiles& files, c10::Device device);
// Tokenizes to the DiT's context length (read from its file's header).
std::unique_ptr<TextEncoder> loadTextEncoder(const ModelFiles& files, c10::Device device);
// The image encoder of files.imageEncoder (throws when the set has none).
std::unique_ptr<ImageEncoder> loadImageEncoder(const ModelFiles& files, c10::Device device);
// files.previewDecoder on `device`; null when there is none.
std::unique_ptr<PreviewDecoder> loadPreviewDecoder(const ModelFiles& files, c10::Device device);

}  // namespace shotchain::models
