#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "continuity/handoff.h"
#include "render/prior_shot.h"
#include "render/render_events.h"
#include "resolve/resolved_shot.h"
#include "sampling/sampler.h"

namespace shotchain::continuity {
class KvStream;
}
namespace shotchain::models {
class VideoDiffusionModel;
class VideoVae;
}  // namespace shotchain::models

namespace shotchain::render {

// A shot sampled chunk by chunk over its stream's KV cache (SamplingKind::KvStream).
struct StreamedShot {
  sampling::SampleResult result;
  at::Tensor video;  // its kept frames [3, T, H, W] on the CPU, decoded chunk by chunk (undefined: decode after)
  int framesWritten = 0;
  double firstFrameSeconds = 0;
  StreamFigures figures;
  int ditPasses = 0;  // batch rows through the DiT, a chunk's commit pass included
};

// The stream a render carries from cut to cut: a block-causal DiT's KV cache with the shot it ended. A stream
// shot continues it as it is (0 bytes handed), recaches it under a new prompt, or rebuilds it from the latents
// of the shots it holds when it is not in memory (a resumed render, a re-render of changed shots).
class StreamSession {
 public:
  // What a shot's sampling reads: the DiT and VAE on the device, the encoded prompts, the render's events.
  struct Models {
    const models::VideoDiffusionModel& dit;
    const models::VideoVae& vae;
    c10::Device device;
    const std::map<std::string, at::Tensor>& prompts;  // prompt → [L, D]
  };

  StreamSession(const resolve::ResolvedSequence& resolved, std::filesystem::path outputDirectory,
                RenderObserver& observer, const std::atomic<bool>& cancel);
  ~StreamSession();

  // `previousLatent`: the latent of the shot it continues, from the chain (the older ones of the stream are read
  // from disk when the cache must be rebuilt). Frames are decoded chunk by chunk unless `tiledDecode`.
  StreamedShot sample(const resolve::ResolvedShot& shot, const std::shared_ptr<PriorShot>& previous,
                      const at::Tensor& previousLatent, const continuity::Conditioning& conditioning,
                      const sampling::SamplerOptions& sampler, const sampling::StepCallback& onStep, int frames,
                      bool tiledDecode, const Models& models);
  // The stream now ends with this shot.
  void ended(int index, const std::string& key);
  // A shot stopped while it sampled: its chunks are in the cache, so the cache is dropped.
  void drop();

 private:
  std::string prepare(const resolve::ResolvedShot& shot, const std::shared_ptr<PriorShot>& previous,
                      const at::Tensor& previousLatent, int branches, bool split, const Models& models);
  void replay(const std::vector<int>& chain, int branches, bool split, const at::Tensor& previousLatent,
              const Models& models);
  const at::Tensor& uncond(const resolve::ResolvedShot& shot, const Models& models) const;

  const resolve::ResolvedSequence& resolved_;
  std::filesystem::path outputDirectory_;
  RenderObserver& observer_;
  const std::atomic<bool>& cancel_;
  std::unique_ptr<continuity::KvStream> stream_;
  int shot_ = -1;  // the shot the stream ends with, and its key
  std::string key_;
};

}  // namespace shotchain::render
