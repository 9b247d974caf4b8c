#pragma once

#include <chrono>
#include <string>

#include "cli/cli_options.h"

namespace shotchain::cli {

// Exit code of a distributed command when a rank died, hung or failed a collective (README): what
// was finished stays on disk, `--resume` continues.
constexpr int kRankLostExit = 6;

// `shotchain VERB … --ranks N` on a plain process: runs this program N times with the torchrun
// variables set (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT a
// free port) and the same arguments (a process the variables place joins instead). Every line a rank writes to stderr (and ranks
// other than 0 to stdout) is forwarded prefixed with "[rank R] "; rank 0's stdout passes through.
// When a rank fails, the others get `timeout` plus a grace period to stop on their own before they
// are killed. The ranks die with the launcher (PR_SET_PDEATHSIG), and a TERM, HUP or INT another
// process sends it is passed on (TERM and HUP: ranks still running 10 s later are killed). Returns
// the exit code: 128 + the signal when a TERM or HUP was passed on, 0 when every rank succeeded,
// kRankLostExit when a rank was killed by a signal, else rank 0's code, else the first failing rank's.
int launchLocalRanks(const std::string& verb, const Args& args, int ranks, std::chrono::milliseconds timeout);

}  // namespace shotchain::cli
