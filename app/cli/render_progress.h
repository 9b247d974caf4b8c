#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "render/render_events.h"

namespace shotchain::cli {

// Shows a render on stderr: one redrawn line (shot i/n, step j/m, ETA, memory) on a terminal,
// plain lines otherwise. Quiet mode prints only warnings and failures.
class RenderProgress : public render::RenderObserver {
 public:
  RenderProgress(std::FILE* out, bool terminal, bool quiet);

  void planReady(const memory::MemoryPlan& plan) override;
  void shotStarted(const render::ShotStarted& event) override;
  void stepDone(const render::StepDone& event) override;
  void cutMeasured(const continuity::CutMetrics& cut) override;
  void memorySampled(int cutIndex, const memory::MemorySample& sample) override;
  void shotFinished(const render::ShotFinished& event) override;
  void warning(const render::RenderWarning& event) override;
  void failed(const render::RenderFailure& event) override;

 private:
  void endLine();
  double etaSeconds(int step, int steps) const;

  std::FILE* out_;
  bool terminal_;
  bool quiet_;
  bool lineOpen_ = false;
  int shotIndex_ = 0;
  int shotCount_ = 0;
  int shotsDone_ = 0;
  int shotsToRender_ = 0;
  double stepSecondsTotal_ = 0;
  int stepsTotal_ = 0;
  std::uint64_t memoryInUse_ = 0;
  std::string memoryLabel_ = "memory";
  int lastPrintedQuarter_ = -1;
};

}  // namespace shotchain::cli
