#include "demo/demo_configs.h"

namespace shotchain::demo {

models::WanVaeConfig demoVaeConfig() {
  models::WanVaeConfig c;
  c.dim = 8;
  c.zDim = 4;             // a 1×4×4 DiT patch then carries 64 values (16 channels: 256, past the DiT's dim 128)
  c.dimMult = {1, 2, 4};  // 4× spatial (8× blurred the shapes and the object's colour: resources/README.md)
  c.numResBlocks = 1;
  c.temporalDownsample = {true, true};
  return c;
}

models::Umt5Config demoUmt5Config() {
  models::Umt5Config c;
  c.vocab = 32;
  c.dim = 64;
  c.dimAttn = 64;
  c.dimFfn = 128;
  c.numHeads = 2;
  c.numLayers = 2;
  c.numBuckets = 32;
  c.maxDistance = 128;
  return c;
}

models::WanConfig demoDitConfig() {
  models::WanConfig c;
  c.modelType = "t2v";
  c.patch = {1, 4, 4};  // 16×16 latents → 4×4 tokens a frame, 80 in all
  c.textLen = 16;       // prompts are at most 10 tokens; fewer padding keys for the cross-attention to ignore
  c.inDim = demoVaeConfig().zDim;
  c.outDim = demoVaeConfig().zDim;
  c.dim = 128;
  c.ffnDim = 512;
  c.freqDim = 256;
  c.textDim = demoUmt5Config().dim;
  c.numHeads = 2;
  c.numLayers = 4;
  // Diffusion forcing with block-causal attention over single latent frames (demo v2): a handed latent
  // is a clean prefix the model was trained on, and the same weights can stream with a KV cache.
  c.diffusionForcing = true;
  c.causalBlockSize = 1;
  c.freshClipContinuation = true;  // its VAE drifts in colour past one 17-frame clip (resources/README.md)
  return c;
}

models::WanConfig keyframeDitConfig(const models::WanConfig& base, const models::WanVaeConfig& vae) {
  models::WanConfig c = base;
  // Wan 2.2 I2V's condition beside the latent: a mask channel per pixel frame of a latent frame, and the latent
  // of the clip with its given frames in place. Full attention, one timestep a clip, as the real I2V experts.
  c.modelType = "i2v";
  c.outDim = vae.zDim;
  c.inDim = vae.zDim + vae.temporalFactor() + vae.zDim;
  c.diffusionForcing = false;
  c.causalBlockSize = 0;
  c.freshClipContinuation = false;
  return c;
}

std::filesystem::path demoResourceDir(const std::filesystem::path& sourceRoot) {
  return sourceRoot / "resources" / "demo";
}

bool demoWeightsPresent(const std::filesystem::path& dir) {
  for (const char* name : {kDitFile, kVaeFile, kTextEncoderFile, kTokenizerFile, kLatentRgbFile})
    if (!std::filesystem::exists(dir / name)) return false;
  return true;
}

}  // namespace shotchain::demo
