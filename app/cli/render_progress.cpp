#include "cli/render_progress.h"

#include <algorithm>

#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

std::string clock(double seconds) {
  const int total = static_cast<int>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%d:%02d", total / 60, total % 60);
  return text;
}

}  // namespace

RenderProgress::RenderProgress(std::FILE* out, bool terminal, bool quiet)
    : out_(out), terminal_(terminal), quiet_(quiet) {}

void RenderProgress::endLine() {
  if (lineOpen_) std::fputc('\n', out_);
  lineOpen_ = false;
}

void RenderProgress::planReady(const memory::MemoryPlan& plan) {
  if (quiet_) return;
  std::fprintf(out_, "plan: %s — %s\n", toString(plan.chosen), plan.reason.c_str());
  memoryLabel_ = plan.device == "cpu" ? "host" : plan.device;
}

void RenderProgress::shotStarted(const render::ShotStarted& event) {
  shotIndex_ = event.index;
  shotCount_ = event.count;
  lastPrintedQuarter_ = -1;
  if (!event.reused) ++shotsToRender_;
  if (quiet_) return;
  endLine();
  std::fprintf(out_, "shot %d/%d %s%s%s\n", event.index + 1, event.count, event.id.c_str(),
               event.name.empty() ? "" : (" \"" + event.name + "\"").c_str(),
               event.reused ? " — unchanged, re-used from the last render" : "");
}

double RenderProgress::etaSeconds(int step, int steps) const {
  if (stepsTotal_ == 0) return 0;
  const double perStep = stepSecondsTotal_ / stepsTotal_;
  const int shotsLeft = std::max(0, shotCount_ - shotIndex_ - 1);
  return perStep * ((steps - step) + shotsLeft * steps);
}

void RenderProgress::stepDone(const render::StepDone& event) {
  stepSecondsTotal_ += event.seconds;
  ++stepsTotal_;
  if (quiet_) return;
  const std::string eta = clock(etaSeconds(event.step, event.steps));
  const std::string memory = util::formatByteSize(memoryInUse_);
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = event.steps > 0 ? kWidth * event.step / event.steps : 0;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(out_, "\r  [%s] shot %d/%d step %d/%d  %.2f s/step  ETA %s  %s %s   ", bar.c_str(), shotIndex_ + 1,
                 shotCount_, event.step, event.steps, event.seconds, eta.c_str(), memoryLabel_.c_str(), memory.c_str());
    std::fflush(out_);
    lineOpen_ = true;
    return;
  }
  const int quarter = event.steps > 0 ? 4 * event.step / event.steps : 4;
  if (quarter == lastPrintedQuarter_) return;
  lastPrintedQuarter_ = quarter;
  std::fprintf(out_, "  step %d/%d (%.2f s/step, ETA %s, %s %s)\n", event.step, event.steps, event.seconds, eta.c_str(),
               memoryLabel_.c_str(), memory.c_str());
}

void RenderProgress::cutMeasured(const continuity::CutMetrics& cut) {
  if (quiet_) return;
  endLine();
  std::fprintf(out_, "  cut %d→%d (%s): handoff %s bytes copied", cut.fromIndex + 1, cut.toIndex + 1, cut.mode.c_str(),
               std::to_string(cut.handoffBytesCopied).c_str());
  if (cut.madRatio) std::fprintf(out_, ", MAD ratio %.2f", *cut.madRatio);
  if (cut.ssimCut) std::fprintf(out_, ", SSIM %.3f", *cut.ssimCut);
  std::fprintf(out_, "\n");
}

void RenderProgress::memorySampled(int, const memory::MemorySample& sample) { memoryInUse_ = sample.allocated; }

void RenderProgress::shotFinished(const render::ShotFinished& event) {
  ++shotsDone_;
  if (quiet_ || event.reused) return;
  endLine();
  std::fprintf(out_, "  done: %d frames in %.1f s (sampling %.1f s, decode %.1f s)\n", event.framesWritten,
               event.seconds, event.sampleSeconds, event.decodeSeconds);
  if (const auto& loras = event.loras) {
    std::string list;
    for (std::size_t i = 0; i < loras->files.size(); ++i)
      list += (i ? ", " : "") + loras->files[i] + " " + std::to_string(loras->strengths[i]).substr(0, 4);
    std::fprintf(out_, "  loras: %s (%d weights patched, %.1f MiB written, %.2f s)\n", list.c_str(),
                 loras->weightsPatched, static_cast<double>(loras->bytesWritten) / (1 << 20), loras->seconds);
  }
  if (const auto& cache = event.cache; cache && cache->off.empty())
    std::fprintf(out_, "  step cache %s %.3g: %d of %d DiT passes computed, %d skipped (%s)\n", cache->policy.c_str(),
                 cache->threshold, cache->computedPasses, cache->computedPasses + cache->skippedPasses,
                 cache->skippedPasses, cache->pattern.c_str());
  else if (cache)
    std::fprintf(out_, "  step cache %s: off (%s)\n", cache->policy.c_str(), cache->off.c_str());
}

void RenderProgress::warning(const render::RenderWarning& event) {
  endLine();
  std::fprintf(out_, "warning: %s%s\n",
               event.shotIndex >= 0 ? ("shot " + std::to_string(event.shotIndex + 1) + ": ").c_str() : "",
               event.message.c_str());
}

void RenderProgress::failed(const render::RenderFailure& event) {
  endLine();
  std::fprintf(out_, "error: %s\n", event.message.c_str());
}

}  // namespace shotchain::cli
