#include "cli/distributed_session.h"

#include <cstdio>
#include <cstdlib>

#include "cli/rank_launcher.h"
#include "distributed/process_group.h"
#include "distributed/rendezvous.h"
#include "models/sequence_parallel.h"

namespace shotchain::cli {
namespace {

[[noreturn]] void endNow(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

// The torchrun variables, a bad one a usage error (exit 2) naming it.
std::optional<distributed::Rendezvous> rendezvousOrUsage(const std::string& command) {
  try {
    return distributed::rendezvousFromEnvironment();
  } catch (const std::invalid_argument& error) {
    throw UsageError(command, std::string(error.what()) +
                                  " (these variables place the process in a distributed run; unset RANK and WORLD_SIZE "
                                  "to run as one process)");
  }
}

}  // namespace

std::string DistributedSession::prefix() const { return group ? "rank " + std::to_string(rank) + ": " : std::string(); }

std::string DistributedSession::failure() const { return group ? group->failure() : std::string(); }

bool DistributedSession::finish() {
  if (!group) return true;
  try {
    group->barrier();
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s%s\n", prefix().c_str(), e.what());
    return false;
  }
}

void DistributedSession::reportFailure(const std::string& message) const {
  if (group) group->reportFailure(message);
}

std::chrono::milliseconds collectiveTimeout(const std::string& command, const ParsedOptions& parsed) {
  if (const std::optional<std::int64_t> seconds = parsed.int64("--timeout")) {
    if (*seconds < 1) throw UsageError(command, "--timeout: at least 1 second");
    return std::chrono::seconds(*seconds);
  }
  try {
    return distributed::collectiveTimeoutFromEnvironment(std::chrono::seconds(300));
  } catch (const std::invalid_argument& error) {
    throw UsageError(command, error.what());
  }
}

std::optional<int> launchRanksIfAsked(const std::string& command, const Args& args, const ParsedOptions& parsed) {
  const std::optional<std::int64_t> ranks = parsed.int64("--ranks");
  if (!ranks) return std::nullopt;
  if (*ranks < 1 || *ranks > 64) throw UsageError(command, "--ranks: 1 to 64 local processes");
  if (rendezvousOrUsage(command)) return std::nullopt;  // a rank already: --ranks said how many
  if (parsed.flag("--guidance-parallel") && *ranks % 2 != 0)
    throw UsageError(command, "--guidance-parallel needs an even --ranks (the two passes on two halves of the ranks)");
  if (*ranks == 1) return std::nullopt;
  return launchLocalRanks(command.substr(0, command.find(' ')), args, static_cast<int>(*ranks),
                          collectiveTimeout(command, parsed));
}

DistributedSession joinDistributed(const std::string& command, const ParsedOptions& parsed, bool cuda) {
  DistributedSession session;
  const std::optional<distributed::Rendezvous> rendezvous = rendezvousOrUsage(command);
  if (!rendezvous || rendezvous->worldSize == 1) return session;
  if (const std::optional<std::int64_t> ranks = parsed.int64("--ranks"); ranks && *ranks != rendezvous->worldSize)
    throw UsageError(command,
                     "--ranks " + std::to_string(*ranks) + " but WORLD_SIZE=" + std::to_string(rendezvous->worldSize));
  distributed::GroupOptions options;
  options.rendezvous = *rendezvous;
  options.timeout = collectiveTimeout(command, parsed);
  options.guidanceGroups = parsed.flag("--guidance-parallel") ? 2 : 1;
  options.cuda = cuda;
  if (const std::string problem = distributed::rendezvousPortProblem(*rendezvous); !problem.empty()) {
    std::fprintf(stderr, "shotchain %s: rank 0: %s\n", command.c_str(), problem.c_str());
    std::fflush(stderr);
    std::_Exit(kRendezvousRefusedExit);  // refused before any work: nothing joined, nothing written
  }
  try {
    session.group = distributed::DistributedGroup::join(options);
  } catch (const distributed::DistributedError& error) {
    std::fprintf(stderr, "shotchain %s: %s\n", command.c_str(), error.what());
    std::fflush(stderr);
    std::_Exit(kRankLostExit);  // nothing was started: no teardown to wait for
  }
  session.rank = rendezvous->rank;
  session.worldSize = rendezvous->worldSize;
  session.localRank = rendezvous->localRank;
  models::setDefaultDitParallel(session.group);
  std::fprintf(stderr, "%sjoined %d ranks at %s:%d (%s; %d sequence x %d guidance; collective timeout %.0f s)\n",
               session.prefix().c_str(), session.worldSize, rendezvous->masterAddress.c_str(), rendezvous->masterPort,
               cuda ? "NCCL" : "Gloo", session.group->sequenceSize(), session.group->guidanceSize(),
               options.timeout.count() / 1000.0);
  return session;
}

int finishDistributed(DistributedSession& session, int status) {
  if (!session.group) return status;
  const std::string failure = session.failure();
  if (!failure.empty()) {
    std::fprintf(stderr, "shotchain: %s\n", failure.c_str());
    session.reportFailure(failure);
    endNow(kRankLostExit);
  }
  if (status != 0) {
    session.reportFailure("it ended with exit code " + std::to_string(status));
    endNow(status);
  }
  if (!session.finish()) endNow(kRankLostExit);
  models::setDefaultDitParallel(nullptr);  // the group ends with the session, not among static destructors
  return status;
}

}  // namespace shotchain::cli
