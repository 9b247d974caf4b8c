#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {

// The group of processes one DiT forward is spread over (core/distributed implements it with
// libtorch's c10d). The world is a grid: `guidanceSize()` (1 or 2) groups, each of
// `sequenceSize()` ranks that split the tokens (DeepSpeed-Ulysses); with 2 guidance groups the
// conditional and the unconditional pass of classifier-free guidance run on different groups
// (xDiT's CFG parallel). Collectives throw std::runtime_error naming the rank at fault.
class DitParallel {
 public:
  virtual ~DitParallel() = default;
  virtual int sequenceRank() const = 0;
  virtual int sequenceSize() const = 0;
  virtual int guidanceRank() const = 0;
  virtual int guidanceSize() const = 0;
  // Sequence group: input [N·k, …] is split along dim 0 into N chunks, chunk j goes to rank j;
  // returns [N·k, …] with rank j's chunk for this rank at j.
  virtual at::Tensor allToAll(const at::Tensor& input) = 0;
  // Sequence group: [N, …] holding every rank's input in rank order.
  virtual at::Tensor allGather(const at::Tensor& input) = 0;
  // Guidance group: [G, …] holding every guidance group's input in order.
  virtual at::Tensor guidanceAllGather(const at::Tensor& input) = 0;
};

// The process-wide group models use unless given their own (like torch.distributed's default
// process group): set once by the entry point after the rendezvous; null on one process.
void setDefaultDitParallel(std::shared_ptr<DitParallel> parallel);
std::shared_ptr<DitParallel> defaultDitParallel();

// One forward's token split over the sequence group (Ulysses): `length` tokens padded to `padded`
// (a multiple of N), this rank holding tokens [offset, offset + shard).
class UlyssesSplit {
 public:
  // nullopt when the group has one rank. Throws std::invalid_argument when `heads` is not a
  // multiple of the group's size.
  static std::optional<UlyssesSplit> make(DitParallel* group, std::int64_t length, std::int64_t heads);

  std::int64_t length() const { return length_; }
  std::int64_t padded() const { return padded_; }
  std::int64_t shard() const { return shard_; }
  std::int64_t offset() const { return offset_; }

  // x [B, length, …] (dim 1 the tokens) → this rank's [B, shard, …]; pad rows are `padValue`.
  at::Tensor shardTokens(const at::Tensor& x, double padValue = 0.0) const;
  // Per-frame rows [B, F, K, dim] → per token of the shard [B, shard, K, dim] (pad tokens take the
  // last frame's rows; their outputs are dropped).
  at::Tensor rowsPerToken(const at::Tensor& rows, std::int64_t tokensPerFrame) const;
  // Keys to keep per sample when padding was added (empty when none was).
  std::vector<std::int64_t> keyLengths(std::int64_t batch) const;
  // Self-attention around the two all-to-alls: q, k, v [B, shard, H, d] → heads split
  // [B, padded, H/N, d], `attend` (full sequence of those heads), back to [B, shard, H, d].
  at::Tensor attention(
      const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
      const std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>& attend) const;
  // [B, shard, C] of every rank → [B, length, C] on every rank.
  at::Tensor gatherTokens(const at::Tensor& y) const;

 private:
  at::Tensor tokensToHeads(const at::Tensor& x) const;
  at::Tensor headsToTokens(const at::Tensor& x) const;

  DitParallel* group_ = nullptr;
  int ranks_ = 1;
  std::int64_t length_ = 0, padded_ = 0, shard_ = 0, offset_ = 0;
};

// CFG parallel: a batch whose size is a multiple of the guidance groups is split between them
// (cond on group 0, uncond on group 1), each runs `forward` on its part, and one all-gather gives
// every rank the whole batch. Other batches run whole on every rank. x [B, …], t [B] or [B, F],
// context [B, L, D].
at::Tensor forwardGuidanceParallel(
    DitParallel& group, const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
    const std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>& forward);

}  // namespace shotchain::models
