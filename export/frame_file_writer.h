#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "render/render_events.h"

namespace shotchain::exporting {

// A render observer that writes every decoded frame as OUT/shots/<NN>-<id>/frames/<n>.png while
// the frames stream in (n = firstFrame + i + 1), then hands each event on to `next` (if any), so
// the CLI and the studio can stack observers: FrameFileWriter writer(out, &progress).
//
// When a shot starts that is not reused, its frames folder is created and any PNG frames left
// from an earlier render of it are removed, so the folder holds exactly this render's frames.
// A frame that cannot be written does not throw into the renderer: it is recorded in errors()
// and passed on once per shot as warning{shotIndex, "output", message} (the sequence's MP4 then
// fails in finalizeOutputs, naming the folder). Safe to call from more than one render thread.
class FrameFileWriter : public render::RenderObserver {
 public:
  explicit FrameFileWriter(std::filesystem::path outputDirectory, render::RenderObserver* next = nullptr);

  void planReady(const memory::MemoryPlan& plan) override;
  void shotStarted(const render::ShotStarted& event) override;
  void stepDone(const render::StepDone& event) override;
  void framesDecoded(const render::FramesDecoded& event) override;
  void cutMeasured(const continuity::CutMetrics& metrics) override;
  void memorySampled(int cutIndex, const memory::MemorySample& sample) override;
  void shotFinished(const render::ShotFinished& event) override;
  void sequenceFinished(const render::SequenceFinished& event) override;
  void warning(const render::RenderWarning& event) override;
  void failed(const render::RenderFailure& event) override;

  int framesWritten() const;
  std::vector<std::string> errors() const;

 private:
  std::filesystem::path shotDirectoryFor(int shotIndex) const;  // empty when the shot never started
  void recordError(int shotIndex, const std::string& message);

  std::filesystem::path out_;
  render::RenderObserver* next_;
  mutable std::mutex mutex_;
  std::map<int, std::string> shotIds_;
  std::set<int> shotsWithErrors_;
  std::vector<std::string> errors_;
  int framesWritten_ = 0;
};

}  // namespace shotchain::exporting
