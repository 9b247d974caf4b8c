#pragma once

// What `shotchain calibrate-cache` measures of a model and writes to a small JSON file: MagCache's
// per-step magnitude ratios and a TeaCache polynomial (docs/step-cache.md). The file is data only;
// the reader refuses anything it does not expect and names the field.
#include <filesystem>
#include <string>
#include <vector>

#include "sampling/step_cache.h"

namespace shotchain::sampling {

struct CacheCalibration {
  std::string model;  // VideoDiffusionModel::family() of the model it was measured on
  int steps = 0;
  double shift = 0;
  int shots = 0;                             // shots it was averaged over
  std::vector<double> magCacheRatios;        // interleaved (conditional, unconditional), 2·steps entries
  std::vector<double> teaCacheCoefficients;  // highest power first
};

inline constexpr const char* kCacheCalibrationFormat = "shotchain.cache-calibration/1";
inline constexpr std::uint64_t kMaxCalibrationFileBytes = 1 << 20;

// Averages the recorded traces of calibration runs (each with record = true) into ratios and fits a
// degree-4 polynomial from the modulation change to the block-stack output change (TeaCache's fit).
CacheCalibration fitCacheCalibration(const std::vector<const StepCache*>& runs, const std::string& model, double shift);

std::string cacheCalibrationJson(const CacheCalibration& calibration);
// Throws std::runtime_error "<path>: <field>: <why>".
CacheCalibration readCacheCalibration(const std::filesystem::path& path);

}  // namespace shotchain::sampling
