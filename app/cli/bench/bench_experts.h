#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sequence/sequence.h"

namespace shotchain::cli {

// `bench residency --experts`: the chain rendered with two experts (the DiT and a copy of it as the high-noise
// expert) under each placement side by side: both resident, swapped at the boundary, read from disk.
struct ExpertRun {
  std::string residency;
  std::string error;
  double wallSeconds = 0;
  double medianMoveSeconds = 0;  // per shot: parking, bringing back or reading the experts
  std::uint64_t medianBytesPerShot = 0;
  std::uint64_t plannedBytesPerShot = 0;  // what the plan predicted for the same shot
  std::uint64_t reservedPeak = 0;         // the budget accounting's peak
  std::uint64_t expertBytes = 0;          // one expert's weights
};

std::vector<ExpertRun> benchExperts(const Sequence& sequence, const std::filesystem::path& baseDir,
                                    const std::filesystem::path& work, const std::string& device);

}  // namespace shotchain::cli
