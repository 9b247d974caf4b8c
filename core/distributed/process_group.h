#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "distributed/rendezvous.h"
#include "models/sequence_parallel.h"

namespace shotchain::distributed {

// What the collectives of one process cost: calls, bytes this rank sent, seconds spent in them
// (waiting for the slowest rank included).
struct CollectiveStats {
  std::uint64_t calls = 0;
  std::uint64_t bytesSent = 0;
  std::uint64_t allToAllBytes = 0;  // of bytesSent: the all-to-alls around self-attention
  double seconds = 0;
};

struct GroupOptions {
  Rendezvous rendezvous;
  // Every collective (and the rendezvous) fails after this long instead of hanging.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  int guidanceGroups = 1;  // 2: the two passes of classifier-free guidance on different ranks (even world)
  bool cuda = false;       // NCCL on CUDA tensors (CUDA builds only); else Gloo on CPU tensors
};

// A collective that failed or timed out, or a rendezvous that did not complete; the message names
// the rank at fault where it can be found (rankAtFault, else −1).
class DistributedError : public std::runtime_error {
 public:
  DistributedError(const std::string& message, int rankAtFault) : std::runtime_error(message), rank_(rankAtFault) {}
  int rankAtFault() const { return rank_; }

 private:
  int rank_;
};

// This process's place in a group of processes joined through libtorch's c10d: a TCPStore served by
// rank 0 for the rendezvous, Gloo (CPU) or NCCL (CUDA) process groups for the world, for each group
// of ranks that split the tokens (Ulysses) and for each pair that splits guidance. Every rank sends a
// heartbeat through the store, so that a collective that fails can say which rank died or hangs.
class DistributedGroup final : public models::DitParallel {
 public:
  // Joins (every rank of the world must call it); throws DistributedError within the timeout.
  static std::shared_ptr<DistributedGroup> join(const GroupOptions& options);
  ~DistributedGroup() override;
  DistributedGroup(const DistributedGroup&) = delete;
  DistributedGroup& operator=(const DistributedGroup&) = delete;

  int rank() const;
  int worldSize() const;
  std::chrono::milliseconds timeout() const;

  int sequenceRank() const override;
  int sequenceSize() const override;
  int guidanceRank() const override;
  int guidanceSize() const override;
  at::Tensor allToAll(const at::Tensor& input) override;
  at::Tensor allGather(const at::Tensor& input) override;
  at::Tensor guidanceAllGather(const at::Tensor& input) override;
  // Every rank of the world.
  void barrier();
  // The largest value over the world (a small CPU tensor; agreement on counts and flags).
  std::int64_t maxOverWorld(std::int64_t value);

  CollectiveStats stats() const;
  void resetStats();
  // The first collective failure of this process (empty while none): later collectives fail at once.
  std::string failure() const;
  // Tells the other ranks why this one stops (they name it in their error), before it exits.
  void reportFailure(const std::string& message);

 private:
  struct Impl;
  explicit DistributedGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shotchain::distributed
