#pragma once

#include "cli/cli_options.h"
#include "sequence/validation.h"

// Options several commands take. Inline, so that every command's table, in whichever file, finds them
// initialised before itself.
namespace shotchain::cli {

using K = OptionKind;

inline const OptionSpec kJson{"--json", K::Flag, "", "print the result as JSON on stdout"};
inline const OptionSpec kPolicy{"--policy", K::Choice, "pinned|offload|reload|auto",
                                "residency policy (default: the sequence's)"};
// The smallest budget a document may give (memory.budget), so the command line cannot go below it either.
inline const OptionSpec kBudget{
    "--budget", K::ByteSize,
    "SIZE",     "memory budget, at least 64 MiB, e.g. 16GiB or 16GB (default: the sequence's)",
    "",         limits::kMinMemoryBudget};
inline const OptionSpec kDtype{"--dtype", K::Choice, "float32|bfloat16", "weights and activations", "float32"};
inline const OptionSpec kRepeats{"--repeats", K::Int, "N", "timed runs, the median is reported", "3"};
inline const OptionSpec kRanks{
    "--ranks", K::Int64, "N",
    "spread over N processes (c10d): started here, or joined through RANK, WORLD_SIZE, MASTER_ADDR, "
    "MASTER_PORT as torchrun sets them"};
inline const OptionSpec kTimeout{
    "--timeout", K::Int64, "S",
    "seconds before a collective between ranks fails (default: SHOTCHAIN_COLLECTIVE_TIMEOUT, else 300)"};
inline const OptionSpec kStateDictKey{
    "--key", K::Text, "KEY",
    "the state dict of a .pt/.pth checkpoint, e.g. generator_ema (default: docs/checkpoints.md)"};
inline const OptionSpec kGuidanceParallel{
    "--guidance-parallel", K::Flag, "",
    "with an even rank count: the conditional and unconditional passes of guidance on "
    "different halves of the ranks"};

}  // namespace shotchain::cli
