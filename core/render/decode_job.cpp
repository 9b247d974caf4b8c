#include "render/decode_job.h"

#include <algorithm>

#include <ATen/ATen.h>

#include "models/video_vae.h"
#include "render/frame_conversion.h"
#include "runtime/thread_intra_op.h"

namespace shotchain::render {

void DecodeJob::run(const models::VideoVae& vae, const memory::MemoryPlan& plan, const std::string& device,
                    int shotFrames) {
  const auto start = util::Stopwatch::now();
  try {
    if (predecoded.defined()) {
      video = predecoded;
      framesWritten = predecodedFrames;
      stats = continuity::computeShotStats(shotId, latent, conditioning.heldFrames(), video);
      if (const std::optional<continuity::CutInputs> inputs = cutInputs(vae)) cut = continuity::measureCut(*inputs);
      decodeSeconds = util::secondsSince(start);
      return;
    }
    std::vector<at::Tensor> kept;
    const std::int64_t drop = conditioning.dropPixelFrames;
    auto sink = [&](const at::Tensor& frames, std::int64_t firstFrame) {
      const std::int64_t n = frames.size(1);
      const std::int64_t skip = std::clamp<std::int64_t>(drop - firstFrame, 0, n);
      if (skip == n) return;
      const at::Tensor keep = frames.narrow(1, skip, n - skip).to(at::kCPU);
      kept.push_back(keep);
      if (firstFrameSeconds == 0) firstFrameSeconds = util::secondsSince(shotStart);
      FramesDecoded event;
      event.shotIndex = index;
      event.firstFrame = framesWritten;
      event.shotFrames = shotFrames;
      event.frames = videoToFrames(keep);
      framesWritten += static_cast<int>(event.frames.size());
      std::lock_guard lock(mutex_);
      events_.push_back(std::move(event));
    };
    const at::Tensor input = continuity::decodeInput(latent, conditioning);
    const memory::DecodeOutcome decoded =
        memory::decodeWithFallback(vae, input, {}, plan, device, index, [&](const at::Tensor& f, std::int64_t offset) {
          if (offset == 0 && framesWritten > 0) {  // a retry after out-of-memory delivers the clip again
            kept.clear();
            framesWritten = 0;
          }
          sink(f, offset);
        });
    fallbacks.insert(fallbacks.end(), decoded.fallbacks.begin(), decoded.fallbacks.end());
    video = at::cat(kept, 1);
    stats = continuity::computeShotStats(shotId, latent, conditioning.heldFrames(), video);
    if (const std::optional<continuity::CutInputs> inputs = cutInputs(vae)) cut = continuity::measureCut(*inputs);
  } catch (...) {
    error = std::current_exception();
  }
  decodeSeconds = util::secondsSince(start);
}

void DecodeJob::start(const models::VideoVae& vae, const memory::MemoryPlan& plan, const std::string& device,
                      int shotFrames, int threads) {
  if (threads <= 0) {
    run(vae, plan, device, shotFrames);
    std::promise<void> done;
    done.set_value();
    finished_ = done.get_future();
    return;
  }
  finished_ = std::async(std::launch::async, [this, &vae, &plan, device, shotFrames, threads] {
    const runtime::ThisThreadIntraOpThreads budget(threads);
    run(vae, plan, device, shotFrames);
  });
}

std::optional<continuity::CutInputs> DecodeJob::cutInputs(const models::VideoVae& vae) const {
  const PriorShot* from = neighbour && neighbour->stats ? neighbour.get()
                          : previous && previous->stats ? previous.get()
                                                        : nullptr;
  if (from == nullptr) return std::nullopt;
  continuity::CutInputs inputs;
  inputs.fromIndex = from->index;
  inputs.toIndex = index;
  inputs.fromShotId = from->id;
  inputs.toShotId = shotId;
  inputs.fromKey = from->key;
  inputs.toKey = key;
  inputs.mode = conditioning.mode;
  inputs.previous = &*from->stats;
  inputs.next = &*stats;
  inputs.first = first && first != self && first->stats ? &*first->stats : nullptr;
  inputs.previousLastFrame = from->lastFrame;
  inputs.nextLatent = latent;
  inputs.nextFrames = video;
  if (previous) inputs.conditioning = &conditioning;
  if (previous.get() == from) {
    inputs.previousTail = previousTail;
    inputs.vae = &vae;
  }
  return inputs;
}

bool DecodeJob::done() const { return finished_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

void DecodeJob::wait() { finished_.wait(); }

std::deque<FramesDecoded> DecodeJob::takeEvents() {
  std::lock_guard lock(mutex_);
  return std::exchange(events_, {});
}

}  // namespace shotchain::render
