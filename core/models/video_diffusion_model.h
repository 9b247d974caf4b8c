#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

class BlockCache;

// A change to a matmul weight applied beside its layer instead of merged into it (a LoRA on an fp8 weight kept
// as stored): the layer adds factor·(x·downᵀ)·upᵀ, or factor·x·diffᵀ, to its output. On the model's device.
struct LayerAdapter {
  at::Tensor up, down;  // low rank: [out, r], [r, in]
  at::Tensor diff;      // or the whole delta [out, in]
  double factor = 1.0;
};
class KvCache;
struct StreamWindow;

// What a DiT can do beyond one timestep for the whole clip; the sampler and the shot pass read
// these instead of a family's config.
struct DitCapabilities {
  bool perFrameTimesteps = false;    // t may be [B, F]: one timestep per latent frame (diffusion forcing)
  std::int64_t causalBlockSize = 0;  // > 0: block-causal self-attention over blocks of this many frames
  bool kvCache = false;  // streams chunk by chunk over a KvCache (newKvCache, forwardCached); chunk = causalBlockSize
  // After a `latent` cut its new latents continue a fresh clip from the previous shot's last frame
  // (continuity::ConditioningOptions::freshClipDecode).
  bool freshClipContinuation = false;
  // Trained to continue from clean first latent frames (Wan 2.2 TI2V): they are fed at timestep 0 and put
  // back after every step, while the rest of the clip shares one schedule (sampling::SamplerOptions::cleanPrefix).
  bool cleanFirstFrames = false;
  // > 0: image-to-video (Wan 2.2 I2V): every call takes this many channels of conditioning `y` (the frame
  // mask and the start image's latent, sampling/image_condition.h) after the latentChannels() it denoises.
  std::int64_t imageConditionChannels = 0;
  // > 0: it also takes the CLIP features of its image(s) (Wan 2.1 I2V: 257 tokens, FLF2V: 514 for the first and
  // last frames), set for the shot with an ImageEmbeddingScope before forwardBatch.
  std::int64_t imageEmbeddingTokens = 0;
};

// A video diffusion transformer, whatever its family: what residency, the sampler and the renderer
// need of it. Implemented by WanModel (Wan 2.1 T2V and its SkyReels-V2 diffusion-forcing variant).
class VideoDiffusionModel {
 public:
  virtual ~VideoDiffusionModel() = default;

  // "Wan 2.1 T2V 1.3B", "SkyReels-V2 DF …": family and variant, for reports and the inspector.
  virtual std::string family() const = 0;
  virtual DitCapabilities capabilities() const = 0;
  // Channels of the latent it denoises (the VAE's z_dim).
  virtual std::int64_t latentChannels() const = 0;
  // The frame-rate conditioning index for `fps` (0 where the family has none).
  virtual std::int64_t fpsConditioning(double fps) const = 0;

  // Velocity of a same-size batch: x [B, C, F, H, W], t [B] (or [B, F] with perFrameTimesteps),
  // context [B, L, text_dim] → [B, C, F, H, W] float32.
  virtual at::Tensor forwardBatch(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                  std::int64_t fpsIndex = 0) const = 0;

  // Streaming (capabilities().kvCache): an empty cache for `branches` guidance branches (1: conditional
  // only; 2: conditional and unconditional) of latents h × w.
  virtual std::unique_ptr<KvCache> newKvCache(std::int64_t branches, std::int64_t latentHeight,
                                              std::int64_t latentWidth, const StreamWindow& window) const;
  // Velocity of one chunk x [B, C, c, h, w] (c = causalBlockSize frames) at t [B] (or [B, c]), batch row b
  // attending to the cached frames of branch firstBranch + b and to the chunk itself. `commit`: the
  // chunk's keys and values join the cache afterwards (called at timestep 0 on a finished chunk).
  virtual at::Tensor forwardCached(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context, KvCache& cache,
                                   std::int64_t firstBranch, bool commit, std::int64_t fpsIndex = 0) const;

  // Step caching (sampling/step_cache.h): why forwardBatch cannot consult a BlockCache now, or "" when it can.
  virtual std::string blockCacheProblem() const;
  // The cache forwardBatch consults until it is set again (null: none). The render thread's: set around
  // one shot's sampling (BlockCacheScope), never while another thread runs a forward of this model.
  virtual void setBlockCache(BlockCache* cache) const;
  // The CLIP image features forwardBatch uses for every batch row until set again (capabilities().
  // imageEmbeddingTokens > 0): [tokens, dim] or [images, tokens, dim]; undefined clears them. Set around one shot's
  // sampling (ImageEmbeddingScope), like the block cache. Throws std::invalid_argument for a model without them.
  virtual void setImageEmbedding(const at::Tensor& features) const;

  // The adapters of every weight that has some (weight name → adapters), replacing those set before; {} takes
  // them all off, leaving the model bit for bit as it was. Throws std::invalid_argument for a family without them.
  virtual void setLayerAdapters(std::map<std::string, std::vector<LayerAdapter>> adapters);

  virtual at::Device device() const = 0;
  virtual std::uint64_t weightBytes() const = 0;
  // Name → tensor, and the same set replaced tensor by tensor (same shape and dtype): how the
  // residency manager moves the weights between the device and host staging.
  virtual std::vector<std::pair<std::string, at::Tensor>> namedParameters() const = 0;
  virtual void replaceParameters(const std::function<at::Tensor(const std::string&, const at::Tensor&)>& transfer) = 0;
};

// Sets a model's block cache for a scope and clears it on the way out, also by an exception.
class BlockCacheScope {
 public:
  BlockCacheScope(const VideoDiffusionModel& model, BlockCache* cache) : model_(model) { model_.setBlockCache(cache); }
  ~BlockCacheScope() { model_.setBlockCache(nullptr); }
  BlockCacheScope(const BlockCacheScope&) = delete;
  BlockCacheScope& operator=(const BlockCacheScope&) = delete;

 private:
  const VideoDiffusionModel& model_;
};

// Sets a model's CLIP image features for a scope and clears them on the way out, also by an exception.
class ImageEmbeddingScope {
 public:
  ImageEmbeddingScope(const VideoDiffusionModel& model, const at::Tensor& features) : model_(model) {
    model_.setImageEmbedding(features);
  }
  ~ImageEmbeddingScope() { model_.setImageEmbedding(at::Tensor()); }
  ImageEmbeddingScope(const ImageEmbeddingScope&) = delete;
  ImageEmbeddingScope& operator=(const ImageEmbeddingScope&) = delete;

 private:
  const VideoDiffusionModel& model_;
};

}  // namespace shotchain::models
