#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "models/kv_cache.h"
#include "sampling/stream_sampler.h"

namespace shotchain::models {
class VideoDiffusionModel;
}

namespace shotchain::continuity {

// A stream of shots on a block-causal DiT: its KV cache and the latents of the frames the cache holds
// (the sink and the window), which a recache runs through the model again. Passed from cut to cut as it
// is: the handoff copies nothing.
class KvStream {
 public:
  // The sink is the stream's first chunk; `window` latent frames after it stay visible.
  KvStream(const models::VideoDiffusionModel& model, int branches, std::int64_t latentHeight, std::int64_t latentWidth,
           std::int64_t windowFrames, std::int64_t fpsIndex);

  int branches() const { return branches_; }
  std::int64_t chunkFrames() const { return chunk_; }
  std::int64_t latentHeight() const { return height_; }
  std::int64_t latentWidth() const { return width_; }
  const models::KvCache& cache() const { return *cache_; }
  // What the sampler streams through; a chunk it commits must be reported with committed().
  const sampling::ChunkDenoiser& denoiser() const { return denoiser_; }
  // The model the denoiser runs from now on (the same weights: a reload policy loads a new object per shot).
  void bind(const models::VideoDiffusionModel& model);
  // A chunk [C, c, h, w] the denoiser just committed: kept (and dropped again as the window slides).
  void committed(const at::Tensor& chunk);
  // Takes in finished latents [C, n, h, w] it did not generate (n a multiple of the chunk; leading
  // frames that do not fill a chunk are left out).
  void commit(const at::Tensor& latents, const at::Tensor& condContext, const at::Tensor& uncondContext, bool split);
  // Rebuilds the cache of the frames it holds under new contexts (LongLive's KV-recache).
  void recache(const at::Tensor& condContext, const at::Tensor& uncondContext, bool split);
  // [C, n, h, w]: the latents of the frames the cache holds, sink first (undefined while empty).
  const at::Tensor& heldLatents() const { return held_; }
  // Latent frames the stream has taken in since it started (a recache takes none in).
  std::int64_t framesTaken() const { return taken_; }

 private:
  std::unique_ptr<models::KvCache> cache_;
  sampling::ChunkDenoiser denoiser_;
  int branches_;
  std::int64_t chunk_, height_, width_, fpsIndex_;
  void keep(const at::Tensor& chunk);
  void commitChunks(const at::Tensor& latents, const at::Tensor& condContext, const at::Tensor& uncondContext,
                    bool split);

  at::Tensor held_;
  std::int64_t taken_ = 0;
};

}  // namespace shotchain::continuity
