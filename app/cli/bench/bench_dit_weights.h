#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <c10/core/ScalarType.h>

#include "models/wan/wan_config.h"

namespace shotchain::cli {

// A DiT size of `bench residency --size`: "1.3b", "14b", or "14b-layers:N" (N blocks of the 14B's shapes).
struct BenchDitSize {
  std::string name;  // as given
  models::WanConfig config;
};

// Throws std::invalid_argument naming what is wrong with `size`.
BenchDitSize parseBenchDitSize(const std::string& size);

// The random DiT of a size in a weights folder: written once, reused while its header still says it is that
// size at that dtype.
struct BenchDitWeights {
  std::filesystem::path file;
  bool written = false;  // false: a file already there was reused
  double writeSeconds = 0;
  std::uint64_t bytes = 0;
};

// "wan_random_14b-layers2_bfloat16.safetensors": the file of `size` at `dtype` in a weights folder.
std::string benchDitFileName(const BenchDitSize& size, at::ScalarType dtype);

// The empty string when `file`'s header holds the DiT of `size` at `dtype` (its config, its blocks, the shapes
// and dtype of their matmul weights), else why not.
std::string benchDitMismatch(const std::filesystem::path& file, const BenchDitSize& size, at::ScalarType dtype);

// The DiT of `size` at `dtype` in `dir`: reused when its header fits, else written there (atomically).
BenchDitWeights ensureBenchDitWeights(const BenchDitSize& size, at::ScalarType dtype, const std::filesystem::path& dir);

}  // namespace shotchain::cli
