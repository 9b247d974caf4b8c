#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli_options.h"

namespace shotchain::distributed {
class DistributedGroup;
}

namespace shotchain::cli {

// A command's place in a distributed run: joined through the torchrun variables, or one process.
struct DistributedSession {
  std::shared_ptr<distributed::DistributedGroup> group;  // null: one process
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;  // the CUDA device of this rank
  bool primary() const { return rank == 0; }
  // "rank R: " in a distributed run, else empty: every line a rank logs starts with it.
  std::string prefix() const;
  // The failure of a collective on this rank, empty when none (or one process).
  std::string failure() const;
  // Every rank waits for the others (before rank 0, which serves the rendezvous, exits); false
  // when that failed.
  bool finish();
  // Tells the other ranks why this one stops.
  void reportFailure(const std::string& message) const;
};

// The exit of a rank: a failed collective prints its error and gives kRankLostExit; a failure
// of this rank is told to the others; on success every rank waits for the others. A rank that
// failed ends at once (c10d's teardown would wait for the rank that is gone).
int finishDistributed(DistributedSession& session, int status);

// --timeout S, else SHOTCHAIN_COLLECTIVE_TIMEOUT, else 300 s.
std::chrono::milliseconds collectiveTimeout(const std::string& command, const ParsedOptions& parsed);

// `--ranks N` (N > 1) on a process that the torchrun variables do not place: launches N local
// ranks of the same command ("render", "bench dit"; args as the verb got them) and returns their exit
// code; otherwise nullopt (run here).
std::optional<int> launchRanksIfAsked(const std::string& command, const Args& args, const ParsedOptions& parsed);

// Exit code of a rank 0 that cannot serve the rendezvous (its port is taken): render's "refused
// before any work" (README).
constexpr int kRendezvousRefusedExit = 4;

// Joins the group the torchrun variables describe (guidance over 2 groups with
// --guidance-parallel) and makes it the models' default; one process when they are not set.
// `cuda`: the DiT runs on CUDA (NCCL in a CUDA build). A rendezvous that fails ends the process
// with kRankLostExit (kRendezvousRefusedExit when rank 0's port is taken); a bad variable, or a
// --ranks other than WORLD_SIZE, throws UsageError.
DistributedSession joinDistributed(const std::string& command, const ParsedOptions& parsed, bool cuda = false);

}  // namespace shotchain::cli
