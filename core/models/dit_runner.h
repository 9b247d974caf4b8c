#pragma once

// The parts of a DiT forward every family shares, around its own blocks: the tokens spread over the ranks of
// a sequence-parallel group (Ulysses), the rows a step cache skips or computes, the activations a trace
// records. A family's forward embeds its tokens, runs them through the runner and writes only its blocks.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/block_cache.h"
#include "models/sequence_parallel.h"

namespace shotchain::models {

// What one forward runs under.
struct DitRunnerOptions {
  DitParallel* parallel = nullptr;                     // its group (null: one process)
  BlockCache* blockCache = nullptr;                    // a step cache to consult (null: none)
  std::map<std::string, at::Tensor>* trace = nullptr;  // activations recorded by name (null: none)
  bool streaming = false;  // a chunk over a KV cache: whole on every rank (its cache is per rank), no step cache
  bool ragged = false;     // samples of several lengths in one batch
  bool trainable = false;  // builds the autograd graph: every block runs
};

class DitRunner {
 public:
  // The forward of samples of `tokens` tokens with `heads` attention heads. Throws std::invalid_argument for a
  // trace of a forward spread over ranks, or heads that do not divide by the group.
  DitRunner(const DitRunnerOptions& options, std::int64_t tokens, std::int64_t heads);

  // The split of the tokens over the group, or null when the forward runs whole here.
  const UlyssesSplit* split() const { return split_ ? &*split_ : nullptr; }
  // [B, tokens, …] → this rank's tokens (the same tensor without a split); pad rows are `padValue`.
  at::Tensor shard(const at::Tensor& x, double padValue = 0.0) const;
  // Per-frame rows [B, F, K, dim] → per token of this rank's tokens (the same tensor without a split).
  at::Tensor rowsPerToken(const at::Tensor& rows, std::int64_t tokensPerFrame) const;
  // This rank's output tokens → every token, on every rank.
  at::Tensor gather(const at::Tensor& y) const;
  // The keys to keep per sample: the samples' lengths when ragged, the split's padding, else none.
  std::vector<std::int64_t> keyLengths(std::int64_t batch, const std::vector<std::int64_t>& lengths) const;

  bool tracing() const { return trace_ != nullptr; }
  void trace(const std::string& name, const at::Tensor& value) const;

  // Blocks [from, to) over tokens `x` [B', L, dim], each row of it reading its row of every tensor of `rowInputs`.
  using Blocks = std::function<at::Tensor(const at::Tensor& x, std::size_t from, std::size_t to,
                                          const std::vector<at::Tensor>& rowInputs)>;
  // The whole block stack (`count` blocks) over the batch `x` [B, L, dim]. With a step cache, the rows it skips
  // add the residual they left the last time they ran, and the rest run as one smaller batch (their residual
  // kept); `timeEmbedding` and `modulation` are what the cache decides on.
  at::Tensor blocks(const Blocks& run, std::size_t count, const at::Tensor& x, const std::vector<at::Tensor>& rowInputs,
                    const at::Tensor& timeEmbedding, const at::Tensor& modulation) const;

 private:
  std::optional<UlyssesSplit> split_;
  BlockCache* cache_ = nullptr;
  std::map<std::string, at::Tensor>* trace_ = nullptr;
};

}  // namespace shotchain::models
