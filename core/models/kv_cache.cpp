#include "models/kv_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include <ATen/ATen.h>

namespace shotchain::models {

KvCache::KvCache(std::int64_t layers, std::int64_t branches, std::int64_t tokensPerFrame, StreamWindow window,
                 Reposition reposition)
    : layers_(layers),
      branches_(branches),
      tokensPerFrame_(tokensPerFrame),
      window_(window),
      reposition_(std::move(reposition)) {
  if (layers <= 0 || branches <= 0 || tokensPerFrame <= 0)
    throw std::invalid_argument("KvCache: layers, branches and tokens per frame must be positive");
  if (window.sinkFrames < 0 || window.windowFrames < 0)
    throw std::invalid_argument("KvCache: the sink and the window cannot be negative");
  keys_.resize(static_cast<std::size_t>(layers));
  values_.resize(static_cast<std::size_t>(layers));
  frames_.assign(static_cast<std::size_t>(branches), 0);
  committed_.assign(static_cast<std::size_t>(branches), 0);
}

std::int64_t KvCache::frames(std::int64_t b) const { return frames_.at(static_cast<std::size_t>(b)); }
std::int64_t KvCache::framesCommitted(std::int64_t b) const { return committed_.at(static_cast<std::size_t>(b)); }

std::uint64_t KvCache::bytes() const {
  if (!keys_.front().defined()) return 0;
  std::int64_t frames = 0;
  for (const std::int64_t f : frames_) frames += f;
  const at::Tensor& k = keys_.front();
  return 2u * static_cast<std::uint64_t>(layers_) * static_cast<std::uint64_t>(frames * tokensPerFrame_) *
         static_cast<std::uint64_t>(k.size(2) * k.size(3)) * k.element_size();
}

void KvCache::clear() {
  std::fill(frames_.begin(), frames_.end(), 0);
  std::fill(committed_.begin(), committed_.end(), 0);
}

at::Tensor KvCache::keys(std::int64_t b, std::int64_t layer) const {
  const std::int64_t n = frames(b);
  if (n == 0) return {};
  return keys_.at(static_cast<std::size_t>(layer))[b].narrow(0, 0, n * tokensPerFrame_);
}

at::Tensor KvCache::values(std::int64_t b, std::int64_t layer) const {
  const std::int64_t n = frames(b);
  if (n == 0) return {};
  return values_.at(static_cast<std::size_t>(layer))[b].narrow(0, 0, n * tokensPerFrame_);
}

void KvCache::reserve(std::int64_t held, std::int64_t chunk, const at::Tensor& like) {
  if (held + chunk <= capacity_ && keys_.front().defined()) return;
  std::int64_t capacity = std::max(held + chunk, 2 * capacity_);  // grows geometrically, up to the window's need
  if (window_.bounded()) capacity = std::max(held + chunk, std::min(capacity, window_.heldFrames() + chunk));
  for (std::size_t l = 0; l < keys_.size(); ++l) {
    at::Tensor k = at::empty({branches_, capacity * tokensPerFrame_, like.size(2), like.size(3)}, like.options());
    at::Tensor v = at::empty_like(k);
    if (keys_[l].defined()) {
      k.narrow(1, 0, capacity_ * tokensPerFrame_).copy_(keys_[l]);
      v.narrow(1, 0, capacity_ * tokensPerFrame_).copy_(values_[l]);
    }
    keys_[l] = std::move(k);
    values_[l] = std::move(v);
  }
  capacity_ = capacity;
}

std::pair<at::Tensor, at::Tensor> KvCache::attend(std::int64_t layer, std::int64_t firstBranch, const at::Tensor& keys,
                                                  const at::Tensor& values) {
  const std::int64_t batch = keys.size(0), tokens = keys.size(1);
  if (keys.dim() != 4 || keys.sizes() != values.sizes() || tokens % tokensPerFrame_ != 0)
    throw std::invalid_argument("KvCache::attend: keys and values must be [B, frames·tokens, heads, head_dim] alike");
  if (firstBranch < 0 || firstBranch + batch > branches_)
    throw std::out_of_range("KvCache::attend: branches " + std::to_string(firstBranch) + "…" +
                            std::to_string(firstBranch + batch - 1) + " of " + std::to_string(branches_));
  const std::int64_t held = frames(firstBranch);
  for (std::int64_t b = 1; b < batch; ++b)
    if (frames(firstBranch + b) != held) throw std::logic_error("KvCache: the guidance branches hold different frames");
  reserve(held, tokens / tokensPerFrame_, keys);
  at::Tensor k = keys_.at(static_cast<std::size_t>(layer)).narrow(0, firstBranch, batch);
  at::Tensor v = values_.at(static_cast<std::size_t>(layer)).narrow(0, firstBranch, batch);
  const std::int64_t start = held * tokensPerFrame_;
  k.narrow(1, start, tokens).copy_(keys);
  v.narrow(1, start, tokens).copy_(values);
  return {k.narrow(1, 0, start + tokens), v.narrow(1, 0, start + tokens)};
}

void KvCache::finishCommit(std::int64_t b, std::int64_t frames) {
  std::int64_t& held = frames_.at(static_cast<std::size_t>(b));
  if (held + frames > capacity_) throw std::logic_error("KvCache: a commit without its chunk");
  held += frames;
  committed_.at(static_cast<std::size_t>(b)) += frames;
  const at::Tensor& first =
      keys_.front();  // every branch holds a committed chunk at once (batch 2, or one after the other)
  peak_ = std::max(
      peak_,
      2u * static_cast<std::uint64_t>(layers_ * branches_ * held * tokensPerFrame_ * first.size(2) * first.size(3)) *
          first.element_size());
  if (!window_.bounded() || held <= window_.heldFrames()) return;
  const std::int64_t sink = std::min(window_.sinkFrames, held) * tokensPerFrame_;
  const std::int64_t recent = window_.windowFrames * tokensPerFrame_;
  const std::int64_t total = held * tokensPerFrame_;
  const std::int64_t shift = (total - recent - sink) / tokensPerFrame_;  // frames the window moves down
  for (std::size_t l = 0; l < keys_.size(); ++l) {
    at::Tensor k = keys_[l][b], v = values_[l][b];
    const at::Tensor movedKeys = reposition_
                                     ? reposition_(k.narrow(0, total - recent, recent), -shift).to(k.scalar_type())
                                     : k.narrow(0, total - recent, recent).clone();
    const at::Tensor movedValues = v.narrow(0, total - recent, recent).clone();
    k.narrow(0, sink, recent).copy_(movedKeys);
    v.narrow(0, sink, recent).copy_(movedValues);
  }
  held = window_.heldFrames();
}

std::uint64_t kvCacheBytes(std::int64_t layers, std::int64_t branches, std::int64_t frames, std::int64_t tokensPerFrame,
                           std::int64_t dim, std::int64_t elementBytes) {
  return static_cast<std::uint64_t>(layers) * static_cast<std::uint64_t>(branches) * 2u *
         static_cast<std::uint64_t>(frames) * static_cast<std::uint64_t>(tokensPerFrame) *
         static_cast<std::uint64_t>(dim) * static_cast<std::uint64_t>(elementBytes);
}

}  // namespace shotchain::models
