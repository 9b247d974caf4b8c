#include "render/model_context.h"

#include <chrono>

#include "models/model_loading.h"
#include "render/shot_key.h"

namespace shotchain::render {

std::unique_ptr<ModelContext> loadModelContext(const models::ModelSetFacts& facts, c10::Device device, bool withDit) {
  const models::ModelFiles& files = facts.files;
  const auto start = std::chrono::steady_clock::now();
  auto context = std::make_unique<ModelContext>();
  context->files = files;
  context->fingerprint = modelFingerprint(files);
  context->device = device;
  context->dit = std::make_unique<memory::ModelSlot>(
      [files](c10::Device on) { return models::loadVideoDiffusionModel(files, on); }, device,
      withDit ? models::loadVideoDiffusionModel(files, device) : nullptr);
  if (!files.ditHighNoise.empty())
    context->ditHighNoise = std::make_unique<memory::ModelSlot>(
        [files](c10::Device on) { return models::loadHighNoiseExpert(files, on); }, device);
  context->vae = models::loadVideoVae(files, device);
  if (!files.latentRgb.empty())
    context->preview = sampling::loadLatentRgbFactors(files.latentRgb);
  else if (facts.vae.knowledge && facts.vae.knowledge->preview)
    context->preview = sampling::latentRgbFactors(*facts.vae.knowledge->preview);
  context->previewDecoder = models::loadPreviewDecoder(files, device);
  context->loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return context;
}

}  // namespace shotchain::render
