#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "sampling/sampler.h"

namespace shotchain::models {
class KvCache;
class VideoDiffusionModel;
}  // namespace shotchain::models

namespace shotchain::sampling {

// A block-causal DiT over a stream: the velocity of one chunk x [B, C, c, h, w] at t [B] (or [B, c]),
// context [B, L, D], batch row b attending to the cached frames of branch firstBranch + b; `commit`:
// the chunk joins the cache. Branch 0 is the conditional prompt, branch 1 the unconditional one.
using ChunkDenoiser = std::function<at::Tensor(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                               std::int64_t firstBranch, bool commit)>;

// The model's forwardCached over `cache` (both must outlive the function).
ChunkDenoiser cachedChunkDenoiser(const models::VideoDiffusionModel& model, models::KvCache& cache,
                                  std::int64_t fpsIndex = 0);
// The same chunks without a cache: every call runs the whole block-causal clip so far, the finished
// frames (kept here) at timestep 0 and the chunk at t, and returns the chunk's part. What streaming
// replaces, and its reference: equal outputs (up to rounding) at many times the cost.
ChunkDenoiser rerunChunkDenoiser(const models::VideoDiffusionModel& model, std::int64_t fpsIndex = 0);

// Guidance branches a stream keeps a cache for: 1 at guidance 1 (conditional only), else 2.
int streamBranches(double guidance);

// Commits finished latents [C, n, h, w] (n a multiple of chunkFrames) chunk by chunk at timestep 0
// under the given contexts: how a stream takes in frames it did not generate, and how a cache is rebuilt.
void commitLatents(const ChunkDenoiser& denoiser, const at::Tensor& latents, std::int64_t chunkFrames,
                   const at::Tensor& condContext, const at::Tensor& uncondContext, int branches, bool split);

struct ChunkDone {
  int chunk = 0;  // 0-based
  int chunks = 0;
  std::int64_t firstFrame = 0;  // its first latent frame in the shot
  const at::Tensor& latent;     // its final latents [C, c, h, w]
  double seconds = 0;           // its denoising and commit
};
// Called when a chunk is final and committed; return false to cancel.
using ChunkCallback = std::function<bool(const ChunkDone&)>;

// Streams latentShape [C, F, h, w] (F a multiple of chunkFrames) chunk by chunk: each chunk starts from
// its frames of the shot's seeded noise (drawn whole, as sampleFlow does), is denoised over
// options.steps steps with guidance while attending to the cache, then committed at timestep 0.
// StepEvent.step counts over all chunks (chunks × steps in all).
SampleResult sampleStream(const ChunkDenoiser& denoiser, const std::vector<std::int64_t>& latentShape,
                          std::int64_t chunkFrames, const at::Tensor& condContext, const at::Tensor& uncondContext,
                          const SamplerOptions& options, const StepCallback& onStep = {},
                          const ChunkCallback& onChunk = {}, const std::atomic<bool>* cancel = nullptr);

}  // namespace shotchain::sampling
