#include "sampling/timestep_matrix.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace shotchain::sampling {

TimestepMatrix diffusionForcingMatrix(const std::vector<std::int64_t>& stepTemplate, const TimestepMatrixRequest& r) {
  if (stepTemplate.empty()) throw std::invalid_argument("diffusion forcing: the schedule has no steps");
  if (r.causalBlockSize < 1) throw std::invalid_argument("diffusion forcing: causal_block_size must be at least 1");
  if (r.frames < 1 || r.baseFrames < 1 || r.arStep < 0 || r.readyFrames < 0 || r.readyFrames > r.frames)
    throw std::invalid_argument(
        "diffusion forcing: need frames ≥ 1, base_num_frames ≥ 1, ar_step ≥ 0 and "
        "0 ≤ ready frames ≤ frames");
  const auto steps = static_cast<std::int64_t>(stepTemplate.size());
  const std::int64_t iterations = steps + 1;
  const std::int64_t blocks = r.frames / r.causalBlockSize;
  const std::int64_t baseBlocks = r.baseFrames / r.causalBlockSize;
  if (baseBlocks < blocks && r.arStep * baseBlocks < steps)
    throw std::invalid_argument("diffusion forcing: ar_step should be at least " +
                                std::to_string((steps + baseBlocks - 1) / std::max<std::int64_t>(baseBlocks, 1)) +
                                " for " + std::to_string(r.frames) + " latent frames through a window of " +
                                std::to_string(r.baseFrames));

  // The template framed by "not started" (999) and "done" (0), so a row counter starts at 1.
  std::vector<std::int64_t> framed{999};
  framed.insert(framed.end(), stepTemplate.begin(), stepTemplate.end());
  framed.push_back(0);

  std::vector<std::vector<std::int64_t>> indexRows;
  std::vector<std::vector<std::uint8_t>> updateRows;
  std::vector<std::int64_t> previous(static_cast<std::size_t>(blocks), 0);
  std::fill_n(previous.begin(), std::min(blocks, r.readyFrames / r.causalBlockSize), iterations);
  const auto finished = [&](std::int64_t value) { return value >= iterations - 1; };
  while (!std::all_of(previous.begin(), previous.end(), finished)) {
    std::vector<std::int64_t> next(previous.size(), 0);
    std::vector<std::uint8_t> update(previous.size(), 0);
    for (std::size_t i = 0; i < next.size(); ++i) {
      next[i] = i == 0 || finished(previous[i - 1]) ? previous[i] + 1 : next[i - 1] - r.arStep;
      next[i] = std::clamp<std::int64_t>(next[i], 0, iterations);
      update[i] = next[i] != previous[i] && next[i] != iterations ? 1 : 0;
    }
    indexRows.push_back(next);
    updateRows.push_back(update);
    previous = std::move(next);
  }

  std::int64_t terminal = baseBlocks;
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  for (const auto& update : updateRows) {
    if (terminal < blocks && update[static_cast<std::size_t>(terminal)]) ++terminal;
    intervals.emplace_back(std::max<std::int64_t>(terminal - baseBlocks, 0), terminal);
  }

  TimestepMatrix matrix;
  const std::int64_t n = r.causalBlockSize;
  matrix.frames = blocks * n;
  for (std::size_t row = 0; row < indexRows.size(); ++row) {
    for (std::int64_t block = 0; block < blocks; ++block) {
      const std::int64_t index = indexRows[row][static_cast<std::size_t>(block)];
      for (std::int64_t k = 0; k < n; ++k) {
        matrix.stepIndex.push_back(index);
        matrix.timesteps.push_back(framed[static_cast<std::size_t>(index)]);
        matrix.update.push_back(updateRows[row][static_cast<std::size_t>(block)]);
      }
    }
    matrix.validInterval.emplace_back(intervals[row].first * n, intervals[row].second * n);
  }
  return matrix;
}

}  // namespace shotchain::sampling
