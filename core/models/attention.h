#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

enum class AttentionImpl {
  Auto,     // Sdpa
  Blocked,  // exact matmul-softmax over blocks of queries: memory bounded by maxBlockBytes
  Sdpa,     // at::scaled_dot_product_attention
};

// softmax(q·kᵀ/√d)·v per head. q [B, Lq, H, d], k and v [B, Lk, H, d]; returns [B, Lq, H, d].
// keyLengths (empty, or one per sample) keeps only the first keyLengths[b] keys of sample b,
// exactly as removing the others from the softmax. Output dtype = q's dtype.
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const std::vector<std::int64_t>& keyLengths = {}, AttentionImpl impl = AttentionImpl::Auto,
                     std::int64_t maxBlockBytes = 256ll << 20);

using AttentionFunction = std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v)>;

// Block-causal attention (q, k, v [B, L, H, d], tokens in frame-major order) from a full-attention
// function: the queries of block j (tokens [j·n, (j+1)·n), n = blockTokens; the last block may be
// shorter) attend to keys [0, (j+1)·n). Exactly the boolean mask block(key) ≤ block(query), without
// computing the masked logits. Out of place, so it also serves training.
at::Tensor blockCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t blockTokens,
                                const AttentionFunction& attend);

}  // namespace shotchain::models
