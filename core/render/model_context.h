#pragma once

#include <memory>
#include <optional>
#include <string>

#include <c10/core/Device.h>

#include "memory/model_slot.h"
#include "models/model_files.h"
#include "models/model_set_facts.h"
#include "models/preview_decoder.h"
#include "models/video_diffusion_model.h"
#include "models/video_vae.h"
#include "sampling/latent_preview.h"

namespace shotchain::render {

// The loaded model set a Renderer keeps between renders (the immutable context): the DiT and the
// VAE on the device, the preview factors, and where they came from. The text encoder is loaded
// for each render's prompts and released before the first DiT step, so it is not kept here.
struct ModelContext {
  models::ModelFiles files;
  std::string fingerprint;  // modelFingerprint (the digest of every model file's bytes): part of every shot key
  c10::Device device = c10::kCPU;
  std::unique_ptr<memory::ModelSlot> dit;  // the DiT (a pair's low-noise expert); absent while released (policy reload)
  // Two experts: the high-noise one, placed by the render's ExpertResidency (on the device, parked in host
  // memory, or absent while released); null for a one-DiT set.
  std::unique_ptr<memory::ModelSlot> ditHighNoise;
  std::unique_ptr<models::VideoVae> vae;
  sampling::LatentRgbFactors preview;  // no channels: previews off
  // Frames that look like the film during sampling (files.previewDecoder); null: the latent mosaic above.
  std::unique_ptr<models::PreviewDecoder> previewDecoder;
  double loadSeconds = 0;
};

// Loads the VAE, the preview factors (a latent_rgb file, else the VAE family's) and (withDit) the DiT onto
// `device` (models/model_loading.h).
std::unique_ptr<ModelContext> loadModelContext(const models::ModelSetFacts& facts, c10::Device device, bool withDit);

}  // namespace shotchain::render
