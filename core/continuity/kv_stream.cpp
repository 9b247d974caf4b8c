#include "continuity/kv_stream.h"

#include <stdexcept>

#include <ATen/ATen.h>

#include "models/video_diffusion_model.h"

namespace shotchain::continuity {

KvStream::KvStream(const models::VideoDiffusionModel& model, int branches, std::int64_t latentHeight,
                   std::int64_t latentWidth, std::int64_t windowFrames, std::int64_t fpsIndex)
    : branches_(branches),
      chunk_(model.capabilities().causalBlockSize),
      height_(latentHeight),
      width_(latentWidth),
      fpsIndex_(fpsIndex) {
  if (!model.capabilities().kvCache || chunk_ <= 0)
    throw std::invalid_argument(model.family() + " does not stream with a KV cache (it needs a block-causal model)");
  if (windowFrames <= 0) throw std::invalid_argument("stream window: at least one latent frame");
  const std::int64_t window = (windowFrames + chunk_ - 1) / chunk_ * chunk_;  // whole chunks
  cache_ = model.newKvCache(branches, latentHeight, latentWidth, {chunk_, window});
  bind(model);
}

void KvStream::bind(const models::VideoDiffusionModel& model) {
  denoiser_ = sampling::cachedChunkDenoiser(model, *cache_, fpsIndex_);
}

void KvStream::committed(const at::Tensor& chunk) {
  keep(chunk);
  taken_ += chunk.size(1);
}

void KvStream::keep(const at::Tensor& chunk) {
  held_ = held_.defined() ? at::cat({held_, chunk.to(held_.device())}, 1) : chunk.clone();
  const models::StreamWindow& window = cache_->window();
  if (held_.size(1) > window.heldFrames()) {
    const std::int64_t n = held_.size(1);
    held_ = at::cat(
        {held_.narrow(1, 0, window.sinkFrames), held_.narrow(1, n - window.windowFrames, window.windowFrames)}, 1);
  }
  if (held_.size(1) != cache_->frames(0)) throw std::logic_error("KvStream: the held latents and the cache disagree");
}

void KvStream::commit(const at::Tensor& latents, const at::Tensor& condContext, const at::Tensor& uncondContext,
                      bool split) {
  commitChunks(latents, condContext, uncondContext, split);
  taken_ += latents.size(1) / chunk_ * chunk_;
}

void KvStream::commitChunks(const at::Tensor& latents, const at::Tensor& condContext, const at::Tensor& uncondContext,
                            bool split) {
  const std::int64_t whole = latents.size(1) / chunk_ * chunk_;
  if (whole == 0) return;
  const at::Tensor frames = latents.narrow(1, latents.size(1) - whole, whole);
  for (std::int64_t first = 0; first < whole; first += chunk_) {
    const at::Tensor chunk = frames.narrow(1, first, chunk_);
    sampling::commitLatents(denoiser_, chunk, chunk_, condContext, uncondContext, branches_, split);
    keep(chunk);
  }
}

void KvStream::recache(const at::Tensor& condContext, const at::Tensor& uncondContext, bool split) {
  if (!held_.defined()) return;
  const at::Tensor frames = held_;
  held_ = at::Tensor();
  cache_->clear();
  commitChunks(frames, condContext, uncondContext, split);
}

}  // namespace shotchain::continuity
