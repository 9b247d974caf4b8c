#pragma once

#include <cstdint>

#include <c10/core/ScalarType.h>

#include "cli/cli_options.h"
#include "models/wan/wan_config.h"

namespace shotchain::cli {

// `bench dit --ranks N` (bench_dit_ranks.cpp): a forward on an h×w token grid spread over the ranks
// the torchrun variables describe (or one process), its compute time, time in collectives, bytes
// sent per layer and per step, and its error against one process.
int benchDitRanks(const ParsedOptions& parsed, const models::WanConfig& config, std::int64_t h, std::int64_t w,
                  int repeats, at::ScalarType dtype);

}  // namespace shotchain::cli
