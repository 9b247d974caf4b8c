#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace shotchain::sampling {

// Which latent frame sits at which timestep at every iteration of diffusion-forcing sampling
// (continuation.md; SkyReels-V2's DiffusionForcingPipeline.generate_timestep_matrix, reproduced exactly).
// Row-major tables of rows() × frames.
struct TimestepMatrix {
  std::int64_t frames = 0;
  std::vector<std::int64_t> timesteps;  // model timestep of each frame (999 = not started, 0 = done)
  std::vector<std::int64_t> stepIndex;  // 0 = not started, k = the frame takes its k-th step (1-based), steps+1 = ready
  std::vector<std::uint8_t> update;     // 1: the frame is updated by the solver at this iteration
  std::vector<std::pair<std::int64_t, std::int64_t>> validInterval;  // [start, end) of the frames fed to the model

  std::int64_t rows() const { return static_cast<std::int64_t>(validInterval.size()); }
  std::int64_t at(const std::vector<std::int64_t>& table, std::int64_t row, std::int64_t frame) const {
    return table[static_cast<std::size_t>(row * frames + frame)];
  }
  bool updates(std::int64_t row, std::int64_t frame) const {
    return update[static_cast<std::size_t>(row * frames + frame)] != 0;
  }
};

struct TimestepMatrixRequest {
  std::int64_t frames = 1;           // latent frames in all, ready prefix included
  std::int64_t baseFrames = 1;       // the model's window: frames fed at once (a long shot slides through it)
  std::int64_t arStep = 0;           // 0: synchronous; k: each frame block starts k iterations after the one before
  std::int64_t readyFrames = 0;      // clean prefix frames (timestep 0, never updated)
  std::int64_t causalBlockSize = 1;  // frames that share one timestep
};

// `stepTemplate`: the solver's timesteps, first to last (the schedule's). Throws std::invalid_argument
// for impossible requests (naming the field), among them an ar_step too small for a long shot's window.
TimestepMatrix diffusionForcingMatrix(const std::vector<std::int64_t>& stepTemplate,
                                      const TimestepMatrixRequest& request);

}  // namespace shotchain::sampling
