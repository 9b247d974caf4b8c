#include "render/model_context.h"

#include <chrono>

#include "io/weight_set.h"
#include "render/shot_key.h"

namespace shotchain::render {

std::string modelFingerprint(const models::ModelFiles& files) {
  std::string all;
  for (const auto* path : {&files.dit, &files.vae, &files.textEncoder, &files.tokenizer, &files.latentRgb})
    all += path->empty() ? std::string("-") : fileFingerprint(*path);
  return digestHex(all);
}

models::WanModel loadDit(const models::ModelFiles& files, c10::Device device) {
  models::WanLoadOptions options;
  options.device = device;
  return models::WanModel::load(io::WeightSet::open(files.dit), options);
}

models::Umt5TextEncoder loadTextEncoder(const models::ModelFiles& files, c10::Device device) {
  models::Umt5TextEncoderOptions options;
  options.model.device = device;
  // The DiT takes at most text_len context rows: tokenize to that length.
  options.textLen = static_cast<std::size_t>(models::detectWanConfig(io::WeightSet::open(files.dit)).config.textLen);
  options.tokenizer = files.tokenizer;
  return models::Umt5TextEncoder::load(files.textEncoder, options);
}

std::unique_ptr<ModelContext> loadModelContext(const models::ModelFiles& files, c10::Device device, bool withDit) {
  const auto start = std::chrono::steady_clock::now();
  auto context = std::make_unique<ModelContext>();
  context->files = files;
  context->fingerprint = modelFingerprint(files);
  context->device = device;
  if (withDit) context->dit.emplace(loadDit(files, device));
  models::WanVaeLoadOptions vaeOptions;
  vaeOptions.device = device;
  context->vae.emplace(models::WanVae::load(io::WeightSet::open(files.vae), vaeOptions));
  if (!files.latentRgb.empty())
    context->preview = sampling::loadLatentRgbFactors(files.latentRgb);
  else if (context->vae->config().zDim == 16)
    context->preview = sampling::wan21LatentRgbFactors();
  context->loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return context;
}

}  // namespace shotchain::render
