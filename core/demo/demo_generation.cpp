#include "demo/demo_generation.h"

#include <algorithm>

#include <ATen/ATen.h>

#include "continuity/handoff.h"
#include "demo/demo_configs.h"
#include "io/weight_set.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/sampler.h"

namespace shotchain::demo {

DemoModels::DemoModels() = default;
DemoModels::~DemoModels() = default;
DemoModels::DemoModels(DemoModels&&) noexcept = default;
DemoModels& DemoModels::operator=(DemoModels&&) noexcept = default;

DemoModels DemoModels::load(const std::filesystem::path& dir) {
  DemoModels m;
  m.dit = std::make_unique<models::WanModel>(models::WanModel::load(io::WeightSet::open(dir / kDitFile)));
  m.vae = std::make_unique<models::WanVae>(models::WanVae::load(io::WeightSet::open(dir / kVaeFile)));
  models::Umt5TextEncoderOptions options;
  options.tokenizer = dir / kTokenizerFile;
  options.textLen = static_cast<std::size_t>(m.dit->config().textLen);
  m.text = std::make_unique<models::Umt5TextEncoder>(models::Umt5TextEncoder::load(dir / kTextEncoderFile, options));
  return m;
}

DemoShot generateDemoShot(const DemoModels& m, const std::string& prompt, std::uint64_t seed, const DemoShotSettings& s,
                          const Continuity& handoff, const DemoShot* previous) {
  const models::WanVaeConfig& vc = m.vae->config();
  const std::vector<std::int64_t> shape{vc.zDim, vc.latentFrames(s.frames), s.height / vc.spatialFactor(),
                                        s.width / vc.spatialFactor()};
  continuity::PreviousShot prev;
  if (previous) {
    prev.latent = previous->latent;
    prev.lastFrame = previous->frames.select(1, previous->frames.size(1) - 1);
  }
  const models::DitCapabilities capabilities = m.dit->capabilities();
  const continuity::Conditioning conditioning =
      continuity::prepareConditioning(handoff, previous ? &prev : nullptr, *m.vae, at::Tensor(), shape, seed, at::kCPU,
                                      continuity::ConditioningOptions{capabilities.freshClipContinuation});
  sampling::SamplerOptions options;
  options.steps = s.steps;
  options.shift = s.shift;
  options.guidance = s.guidance;
  options.seed = seed;
  // The re-noised slot takes one timestep for the whole clip (the hook runs on that path only).
  const bool cleanPrefix = capabilities.perFrameTimesteps && !(s.renoisedSlot && conditioning.heldFrames() > 0);
  if (cleanPrefix) {
    sampling::PerFrameSampling forcing;
    forcing.prefix = conditioning.held;
    forcing.conditionNoise = conditioning.heldFrames() > 0 ? s.conditionNoise : 0;
    forcing.causalBlockSize = static_cast<int>(std::max<std::int64_t>(1, capabilities.causalBlockSize));
    options.perFrame = forcing;
  }
  const at::Tensor cond = m.text->encode(prompt);
  const at::Tensor uncond = m.text->encode(std::string(models::wanNegativePrompt()));
  sampling::SampleResult result =
      sampling::sampleFlow(sampling::ditDenoiser(*m.dit), conditioning.sampleShape, cond, uncond, options, {},
                           cleanPrefix ? sampling::BeforeStepHook{} : continuity::holdSlotsHook(conditioning));
  if (!cleanPrefix) continuity::restoreHeldSlots(result.latent, conditioning);
  DemoShot shot;
  shot.latent = result.latent;
  shot.heldLatentFrames = conditioning.heldFrames();
  const at::Tensor decoded = m.vae->decode(continuity::decodeInput(result.latent, conditioning));
  shot.frames = continuity::keptFrames(decoded, conditioning).contiguous();
  return shot;
}

}  // namespace shotchain::demo
