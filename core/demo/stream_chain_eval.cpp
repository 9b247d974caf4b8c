#include "demo/stream_chain_eval.h"

#include <utility>

#include <ATen/ATen.h>

#include "continuity/handoff.h"
#include "continuity/kv_stream.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/stream_sampler.h"

namespace shotchain::demo {

DemoShot generateDemoStreamShot(const DemoModels& m, continuity::KvStream& stream, const std::string& prompt,
                                std::uint64_t seed, const DemoShotSettings& s, const DemoShot* previous,
                                const std::string& previousPrompt, bool recache) {
  const models::WanVaeConfig& vc = m.vae->config();
  const std::vector<std::int64_t> shape{vc.zDim, vc.latentFrames(s.frames), s.height / vc.spatialFactor(),
                                        s.width / vc.spatialFactor()};
  Continuity handoff;
  handoff.mode = ContinuityMode::Stream;
  continuity::PreviousShot prev;
  if (previous) {
    prev.latent = previous->latent;
    prev.lastFrame = previous->frames.select(1, previous->frames.size(1) - 1);
  }
  const continuity::Conditioning conditioning =
      continuity::prepareConditioning(handoff, previous ? &prev : nullptr, *m.vae, at::Tensor(), shape, seed, at::kCPU,
                                      continuity::ConditioningOptions{m.dit->capabilities().freshClipContinuation});
  const at::Tensor cond = m.text->encode(prompt);
  const at::Tensor uncond = m.text->encode(std::string(models::wanNegativePrompt()));
  if (previous && recache && prompt != previousPrompt) stream.recache(cond, uncond, false);
  sampling::SamplerOptions options;
  options.steps = s.steps;
  options.shift = s.shift;
  options.guidance = s.guidance;
  options.seed = seed;
  const sampling::SampleResult result =
      sampling::sampleStream(stream.denoiser(), conditioning.sampleShape, stream.chunkFrames(), cond, uncond, options,
                             {}, [&](const sampling::ChunkDone& done) {
                               stream.committed(done.latent);
                               return true;
                             });
  DemoShot shot;
  shot.latent = result.latent;
  const at::Tensor decoded = m.vae->decode(continuity::decodeInput(result.latent, conditioning));
  shot.frames = continuity::keptFrames(decoded, conditioning).contiguous();
  return shot;
}

ChainCutResult evaluateStreamChainCuts(const DemoModels& models, const DemoShotSettings& settings, int chains,
                                       int window, bool recache) {
  const std::int64_t spatial = models.vae->config().spatialFactor();
  return measureChainCuts("stream", recache ? "KV cache, recached" : "KV cache, kept", chains,
                          [&](const std::string& first, const std::string& next, std::uint64_t seed) {
                            continuity::KvStream stream(*models.dit, sampling::streamBranches(settings.guidance),
                                                        settings.height / spatial, settings.width / spatial, window, 0);
                            DemoShot a = generateDemoStreamShot(models, stream, first, seed, settings);
                            DemoShot b =
                                generateDemoStreamShot(models, stream, next, seed + 1, settings, &a, first, recache);
                            return std::make_pair(std::move(a), std::move(b));
                          });
}

}  // namespace shotchain::demo
