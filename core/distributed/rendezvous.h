#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace shotchain::distributed {

// Where a process stands in a group, as torchrun (and schedulers such as Slurm through it) sets it:
// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and LOCAL_RANK.
struct Rendezvous {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddress = "127.0.0.1";
  int masterPort = 29500;
  // torchrun's agent already serves the store at MASTER_ADDR:MASTER_PORT
  // (TORCHELASTIC_USE_AGENT_STORE=True): rank 0 connects to it instead of serving one.
  bool agentStore = false;
};

// nullopt when neither RANK nor WORLD_SIZE is set (a plain single process). Throws
// std::invalid_argument naming the variable when one is missing or not a valid number.
std::optional<Rendezvous> rendezvousFromEnvironment();

// Why rank 0 cannot serve the rendezvous on MASTER_PORT (another program listens there), or empty:
// checked with a bind of its own before c10d tries, which would fail with a raw log line.
std::string rendezvousPortProblem(const Rendezvous& r);

// SHOTCHAIN_COLLECTIVE_TIMEOUT (seconds) when set, else `fallback`; throws naming the variable.
std::chrono::milliseconds collectiveTimeoutFromEnvironment(std::chrono::milliseconds fallback);

}  // namespace shotchain::distributed
