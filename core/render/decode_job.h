#pragma once

#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "continuity/cut_measures.h"
#include "continuity/handoff.h"
#include "memory/decode_fallback.h"
#include "render/prior_shot.h"
#include "render/render_events.h"
#include "render/shot_record.h"
#include "util/stopwatch.h"

namespace shotchain::models {
class VideoVae;
}

namespace shotchain::render {

// One shot's decode and measurements, run on a worker thread beside the next shot's sampling (or
// inline). Its frame events queue up until the render thread delivers them.
class DecodeJob {
 public:
  int index = 0;
  std::string shotId;
  std::string key;
  std::filesystem::path directory;
  at::Tensor latent;
  continuity::Conditioning conditioning;
  std::shared_ptr<PriorShot> self, previous, first;
  std::shared_ptr<PriorShot> neighbour;  // the enabled shot just before in sequence order (null: not known)
  at::Tensor previousTail;
  at::Tensor startKeyframe, endKeyframe;  // PreparedShot's
  ShotRecord record;
  bool lastShot = false;
  util::Stopwatch::time_point shotStart = util::Stopwatch::now();
  at::Tensor predecoded;  // frames already decoded (and delivered) while the shot streamed
  int predecodedFrames = 0;

  // Results.
  at::Tensor video;  // kept frames [3, T, H, W] on the CPU
  std::optional<continuity::ShotStats> stats;
  std::optional<continuity::CutMetrics> cut;
  std::vector<memory::MemoryFallback> fallbacks;
  double decodeSeconds = 0;
  double firstFrameSeconds = 0;
  int framesWritten = 0;
  std::exception_ptr error;

  // `threads` > 0: on a worker thread with that many intra-op threads, so that the render thread keeps sampling;
  // 0: here and now.
  void start(const models::VideoVae& vae, const memory::MemoryPlan& plan, const std::string& device, int shotFrames,
             int threads);
  bool done() const;
  void wait();
  std::deque<FramesDecoded> takeEvents();

 private:
  void run(const models::VideoVae& vae, const memory::MemoryPlan& plan, const std::string& device, int shotFrames);
  // The cut is the one the viewer sees: from the neighbour (for `none` shots too), else, when the
  // neighbour is not known, from the shot handed off from. The handoff figures are kept for a handoff;
  // its latent figures only when the handoff came from the neighbour (they compare with its tail).
  std::optional<continuity::CutInputs> cutInputs(const models::VideoVae& vae) const;

  std::mutex mutex_;
  std::deque<FramesDecoded> events_;
  std::future<void> finished_;
};

}  // namespace shotchain::render
