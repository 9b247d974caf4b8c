#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// What a DiT's forward shows a step cache before its block stack, per batch row (a guidance branch).
struct BlockStackProbe {
  const at::Tensor& timeEmbedding;  // e [B, dim] (or [B·F, dim] with per-frame timesteps), float32
  const at::Tensor& modulation;     // e0 of the blocks [B, 6, dim] (or [B, F, 6, dim]), float32
  const at::Tensor& input;          // the tokens entering the stack [B, L, dim], float32
  // After probeBlocks() blocks: their output less `input` [B, L, dim] (undefined when probeBlocks() is 0).
  const at::Tensor& probeResidual;
};

// A step cache seen from the DiT (sampling/step_cache.h implements it): for every row of a forward, run
// the block stack or add the residual it left the last time it ran. The rows a call computes run as one
// smaller batch of their own (the same operations; a batch of another size may round differently).
class BlockCache {
 public:
  virtual ~BlockCache() = default;
  // Blocks that run on every row before the decision (First-Block Cache: 1); the cached residual then
  // covers the blocks after them.
  virtual int probeBlocks() const = 0;
  // One entry per row: true to skip the (remaining) blocks and add residual(row).
  virtual std::vector<bool> skipRows(const BlockStackProbe& probe) = 0;
  virtual at::Tensor residual(std::int64_t row) const = 0;
  // A computed row's residual (output of the stack less its input after the probe blocks), [L, dim].
  virtual void store(std::int64_t row, const at::Tensor& residual) = 0;
};

}  // namespace shotchain::models
