#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// Which finished latent frames a chunk may attend to: the first `sinkFrames` of the stream (a frame
// sink) and the last `windowFrames` (0: all of them; the cache then grows with the stream).
struct StreamWindow {
  std::int64_t sinkFrames = 0;
  std::int64_t windowFrames = 0;

  bool bounded() const { return windowFrames > 0; }
  // Frames a cache holds at most between commits (unbounded: −1).
  std::int64_t heldFrames() const { return bounded() ? sinkFrames + windowFrames : -1; }
};

// The keys (rotated by RoPE) and values of the finished latent frames of a stream, per guidance branch and
// per layer: what a block-causal DiT carries from chunk to chunk, and from shot to shot. Frames are kept
// in stream order at positions 0…n−1; when the window slides, the frames after the sink move down to
// follow it (`reposition`), so every relative distance but the sink's stays what it was. Each layer is one
// buffer [branches, frames · tokensPerFrame, H, d] with room for a chunk after the held frames: a call
// writes its chunk there and attends to a view, so no call copies the cache.
class KvCache {
 public:
  // keys [..., n·tokensPerFrame, H, d] rotated as if `frames` frames later in the stream (negative: earlier).
  using Reposition = std::function<at::Tensor(const at::Tensor& keys, std::int64_t frames)>;

  KvCache(std::int64_t layers, std::int64_t branches, std::int64_t tokensPerFrame, StreamWindow window,
          Reposition reposition = {});

  std::int64_t layers() const { return layers_; }
  std::int64_t branches() const { return branches_; }
  std::int64_t tokensPerFrame() const { return tokensPerFrame_; }
  const StreamWindow& window() const { return window_; }
  // Latent frames held for `branch` (every layer holds the same frames).
  std::int64_t frames(std::int64_t branch = 0) const;
  // Frames ever committed to `branch` since the last clear (evicted ones included).
  std::int64_t framesCommitted(std::int64_t branch = 0) const;
  // Bytes of the frames held (every branch and layer).
  std::uint64_t bytes() const;
  // The most bytes held so far (a committed chunk is in before the window drops the oldest frames).
  std::uint64_t peakBytes() const { return peak_; }
  void clear();

  // [n·tokensPerFrame, H, d] of `branch` at `layer` (a view); undefined while the branch is empty.
  at::Tensor keys(std::int64_t branch, std::int64_t layer) const;
  at::Tensor values(std::int64_t branch, std::int64_t layer) const;
  // The chunk's keys and values [B, c·tokensPerFrame, H, d] of branches firstBranch… written after the held
  // frames at `layer`; returns what its queries see, [B, (n + c)·tokensPerFrame, H, d] views. They join the
  // held frames when finishCommit is called for the branch.
  std::pair<at::Tensor, at::Tensor> attend(std::int64_t layer, std::int64_t firstBranch, const at::Tensor& keys,
                                           const at::Tensor& values);
  // The chunk of `frames` frames last passed to attend() at every layer of `branch` is now held: drops what
  // falls outside sink + window.
  void finishCommit(std::int64_t branch, std::int64_t frames);

 private:
  void reserve(std::int64_t held, std::int64_t chunk, const at::Tensor& like);

  std::int64_t layers_, branches_, tokensPerFrame_;
  StreamWindow window_;
  Reposition reposition_;
  std::vector<at::Tensor> keys_, values_;  // per layer: [branches, capacity·tokensPerFrame, H, d]
  std::int64_t capacity_ = 0;              // frames
  std::vector<std::int64_t> frames_, committed_;
  std::uint64_t peak_ = 0;
};

// Bytes of a cache at its largest: `branches` × layers × (keys and values) × frames × tokens × dim.
std::uint64_t kvCacheBytes(std::int64_t layers, std::int64_t branches, std::int64_t frames, std::int64_t tokensPerFrame,
                           std::int64_t dim, std::int64_t elementBytes);

}  // namespace shotchain::models
