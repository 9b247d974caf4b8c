#include "models/attention.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>

namespace shotchain::models {
namespace {

at::Tensor blockedAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t keys,
                            std::int64_t maxBlockBytes, at::Tensor out) {
  // q [Lq, H, d] → [H, Lq, d]; keys and values sliced to the valid length.
  const std::int64_t queries = q.size(0), heads = q.size(1), d = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  // Contiguous [H, Lq, d] with the scale folded in (a pass over Lq·d values, not Lq·Lk logits).
  const at::Tensor qh = q.transpose(0, 1).mul(scale);
  const at::Tensor kt = k.narrow(0, 0, keys).permute({1, 2, 0}).contiguous();  // [H, d, Lk]
  const at::Tensor vh = v.narrow(0, 0, keys).transpose(0, 1).contiguous();     // [H, Lk, d]
  const std::int64_t bytesPerRow = heads * std::max<std::int64_t>(keys, 1) * 4;
  const std::int64_t block =
      std::clamp<std::int64_t>(maxBlockBytes / bytesPerRow, 1, std::max<std::int64_t>(queries, 1));
  at::Tensor result = at::empty({heads, queries, d}, q.options());  // [H, Lq, d], transposed once at the end
  for (std::int64_t start = 0; start < queries; start += block) {
    const std::int64_t n = std::min(block, queries - start);
    const at::Tensor probabilities = at::softmax(at::bmm(qh.narrow(1, start, n), kt), -1);  // [H, n, Lk]
    at::Tensor target = result.narrow(1, start, n);
    at::bmm_out(target, probabilities, vh);
  }
  out.copy_(result.transpose(0, 1));
  return out;
}

}  // namespace

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const std::vector<std::int64_t>& keyLengths, AttentionImpl impl, std::int64_t maxBlockBytes) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.size(0) != k.size(0) || k.sizes() != v.sizes() ||
      q.size(2) != k.size(2) || q.size(3) != k.size(3))
    throw std::invalid_argument("attention: expected q [B, Lq, H, d] and k, v [B, Lk, H, d] of matching sizes");
  const std::int64_t batch = q.size(0);
  if (!keyLengths.empty() && static_cast<std::int64_t>(keyLengths.size()) != batch)
    throw std::invalid_argument("attention: one key length per sample expected");
  if (impl == AttentionImpl::Auto) impl = AttentionImpl::Sdpa;
  at::Tensor out = at::empty(q.sizes(), q.options());
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t keys = keyLengths.empty()
                                  ? k.size(1)
                                  : std::clamp<std::int64_t>(keyLengths[static_cast<std::size_t>(b)], 0, k.size(1));
    if (impl == AttentionImpl::Blocked) {
      blockedAttention(q[b], k[b], v[b], keys, maxBlockBytes, out[b]);
      continue;
    }
    const at::Tensor qb = q[b].transpose(0, 1).unsqueeze(0);
    const at::Tensor kb = k[b].narrow(0, 0, keys).transpose(0, 1).unsqueeze(0);
    const at::Tensor vb = v[b].narrow(0, 0, keys).transpose(0, 1).unsqueeze(0);
    out[b].copy_(at::scaled_dot_product_attention(qb, kb, vb).squeeze(0).transpose(0, 1));
  }
  return out;
}

at::Tensor blockCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t blockTokens,
                                const AttentionFunction& attend) {
  if (blockTokens <= 0) throw std::invalid_argument("blockCausalAttention: the block must hold at least one token");
  const std::int64_t length = q.size(1);
  if (k.size(1) != length || v.size(1) != length)
    throw std::invalid_argument("blockCausalAttention: queries, keys and values must be the same tokens");
  std::vector<at::Tensor> pieces;
  for (std::int64_t start = 0; start < length; start += blockTokens) {
    const std::int64_t n = std::min(blockTokens, length - start);
    const std::int64_t visible = start + n;
    pieces.push_back(attend(q.narrow(1, start, n), k.narrow(1, 0, visible), v.narrow(1, 0, visible)));
  }
  return pieces.size() == 1 ? pieces.front() : at::cat(pieces, 1);
}

}  // namespace shotchain::models
