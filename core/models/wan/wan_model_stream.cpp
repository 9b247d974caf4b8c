// WanModel's KV-cache stream: the cache, a chunk's RoPE after the cached frames, its self-attention and the
// forward of one chunk.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/wan/wan_model_impl.h"

namespace shotchain::models {

StreamRope streamRopeFor(const KvCache& cache, std::int64_t firstBranch, std::int64_t batch, std::int64_t headDim,
                         std::int64_t frames, std::int64_t height, std::int64_t width, const at::Device& device) {
  const std::int64_t held = cache.frames(firstBranch);
  for (std::int64_t b = 1; b < batch; ++b)
    if (cache.frames(firstBranch + b) != held)
      throw std::logic_error("WanModel::forwardCached: the guidance branches of the cache hold different frames");
  if (cache.tokensPerFrame() != height * width)
    throw std::invalid_argument("WanModel::forwardCached: the chunk has " + std::to_string(height * width) +
                                " tokens per frame, the cache " + std::to_string(cache.tokensPerFrame()));
  // The chunk's grid, its frame axis moved `held` frames on (the height and width angles of frame `held`'s
  // first token are 0).
  const at::Tensor shift = ropeGridAngles(headDim, held + 1, 1, 1)[held];
  const at::Tensor angles = (ropeGridAngles(headDim, frames, height, width) + shift).to(device).unsqueeze(0);
  return {at::cos(angles), at::sin(angles), held * height * width};
}

at::Tensor WanModel::Impl::cachedSelfAttention(const Attention& a, const at::Tensor& z, const StreamRope& rope,
                                               KvCache& cache, std::int64_t layer, std::int64_t firstBranch,
                                               std::int64_t causalTokens) const {
  const std::int64_t chunk = z.size(1), cached = rope.cachedTokens;
  const at::Tensor qr = ropeApply(heads(rmsNorm(a.q(z), a.normQ)), rope.cos, rope.sin).to(compute);
  const at::Tensor k = ropeApply(heads(rmsNorm(a.k(z), a.normK)), rope.cos, rope.sin).to(compute);
  const at::Tensor v = heads(a.v(z)).to(compute);
  const auto [kr, vc] = cache.attend(layer, firstBranch, k, v);
  at::Tensor out;
  if (causalTokens <= 0 || causalTokens >= chunk) {
    out = models::attention(qr, kr, vc, {}, attention);
  } else {
    std::vector<at::Tensor> pieces;
    for (std::int64_t start = 0; start < chunk; start += causalTokens) {
      const std::int64_t n = std::min(causalTokens, chunk - start), visible = cached + start + n;
      pieces.push_back(
          models::attention(qr.narrow(1, start, n), kr.narrow(1, 0, visible), vc.narrow(1, 0, visible), {}, attention));
    }
    out = at::cat(pieces, 1);
  }
  return a.o(out.flatten(2));
}

std::unique_ptr<KvCache> WanModel::newKvCache(std::int64_t branches, std::int64_t latentHeight,
                                              std::int64_t latentWidth, const StreamWindow& window) const {
  const WanConfig& c = impl_->config;
  if (impl_->causalBlockSize <= 0) return VideoDiffusionModel::newKvCache(branches, latentHeight, latentWidth, window);
  if (latentHeight % c.patch[1] != 0 || latentWidth % c.patch[2] != 0)
    throw std::invalid_argument("WanModel::newKvCache: the latent size is not a multiple of the patch");
  const std::int64_t tokens = (latentHeight / c.patch[1]) * (latentWidth / c.patch[2]);
  const std::int64_t headDim = c.headDim();
  // A frame shift is a rotation of the frame axis' pairs alone (height and width angles 0).
  auto reposition = [headDim](const at::Tensor& keys, std::int64_t frames) {
    const std::int64_t distance = frames < 0 ? -frames : frames;
    at::Tensor angles = ropeGridAngles(headDim, distance + 1, 1, 1)[distance].to(keys.device());
    if (frames < 0) angles = angles.neg();
    const at::Tensor cos = at::cos(angles).view({1, 1, -1}), sin = at::sin(angles).view({1, 1, -1});
    return ropeApply(keys.unsqueeze(0), cos, sin).squeeze(0).to(keys.scalar_type());
  };
  return std::make_unique<KvCache>(c.numLayers, branches, tokens, window, reposition);
}

at::Tensor WanModel::forwardCached(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context, KvCache& cache,
                                   std::int64_t firstBranch, bool commit, std::int64_t fpsIndex) const {
  const WanConfig& c = impl_->config;
  if (impl_->causalBlockSize <= 0)
    return VideoDiffusionModel::forwardCached(x, t, context, cache, firstBranch, commit, fpsIndex);
  if (x.dim() != 5 || x.size(2) != impl_->causalBlockSize * c.patch[0])
    throw std::invalid_argument("WanModel::forwardCached: a chunk is [B, C, " +
                                std::to_string(impl_->causalBlockSize * c.patch[0]) + ", h, w] (one causal block)");
  if (cache.layers() != c.numLayers || firstBranch < 0 || firstBranch + x.size(0) > cache.branches())
    throw std::invalid_argument("WanModel::forwardCached: the cache does not fit this model or batch");
  std::vector<at::Tensor> xs, contexts;
  for (std::int64_t b = 0; b < x.size(0); ++b) {
    xs.push_back(x[b]);
    contexts.push_back(context[b]);
  }
  const StreamCall call{&cache, firstBranch};
  at::Tensor out = at::stack(run(xs, t, contexts, nullptr, fpsIndex, &call));
  if (commit)
    for (std::int64_t b = 0; b < x.size(0); ++b) cache.finishCommit(firstBranch + b, x.size(2) / c.patch[0]);
  return out;
}

}  // namespace shotchain::models
