#include "export/frame_file_writer.h"

#include <exception>
#include <regex>
#include <system_error>
#include <utility>

#include "export/png_frame.h"
#include "export/shot_paths.h"

namespace shotchain::exporting {
namespace {

// Frames from an earlier render of the shot; anything else in the folder is left alone.
void removeStaleFrames(const std::filesystem::path& frames) {
  static const std::regex frameName(R"(\d{6}\.png)");
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(frames, error)) {
    if (entry.is_regular_file() && std::regex_match(entry.path().filename().string(), frameName))
      std::filesystem::remove(entry.path(), error);
  }
}

}  // namespace

FrameFileWriter::FrameFileWriter(std::filesystem::path outputDirectory, render::RenderObserver* next)
    : out_(std::move(outputDirectory)), next_(next) {}

std::filesystem::path FrameFileWriter::shotDirectoryFor(int shotIndex) const {
  std::lock_guard lock(mutex_);
  const auto found = shotIds_.find(shotIndex);
  if (found == shotIds_.end()) return {};
  return shotDirectory(out_, shotIndex, found->second);
}

void FrameFileWriter::recordError(int shotIndex, const std::string& message) {
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    errors_.push_back(message);
    first = shotsWithErrors_.insert(shotIndex).second;
  }
  if (first && next_) next_->warning(render::RenderWarning{shotIndex, "output", message});
}

void FrameFileWriter::shotStarted(const render::ShotStarted& event) {
  {
    std::lock_guard lock(mutex_);
    shotIds_[event.index] = event.id;
    shotsWithErrors_.erase(event.index);
  }
  if (!event.reused) {
    const auto frames = framesDirectory(shotDirectory(out_, event.index, event.id));
    std::error_code error;
    std::filesystem::create_directories(frames, error);
    if (error)
      recordError(event.index, frames.string() + ": cannot create the frames folder: " + error.message());
    else
      removeStaleFrames(frames);
  }
  if (next_) next_->shotStarted(event);
}

void FrameFileWriter::framesDecoded(const render::FramesDecoded& event) {
  const auto shotDir = shotDirectoryFor(event.shotIndex);
  if (shotDir.empty()) {
    recordError(event.shotIndex, "frames of shot " + std::to_string(event.shotIndex + 1) +
                                     " arrived before the shot started; they were not written");
  } else {
    int written = 0;
    try {
      std::filesystem::create_directories(framesDirectory(shotDir));
      for (std::size_t i = 0; i < event.frames.size(); ++i) {
        writePngFrame(event.frames[i], frameFile(shotDir, event.firstFrame + static_cast<int>(i) + 1));
        ++written;
      }
    } catch (const std::exception& error) {
      recordError(event.shotIndex, error.what());
    }
    std::lock_guard lock(mutex_);
    framesWritten_ += written;
  }
  if (next_) next_->framesDecoded(event);
}

int FrameFileWriter::framesWritten() const {
  std::lock_guard lock(mutex_);
  return framesWritten_;
}

std::vector<std::string> FrameFileWriter::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

void FrameFileWriter::planReady(const memory::MemoryPlan& plan) {
  if (next_) next_->planReady(plan);
}
void FrameFileWriter::stepDone(const render::StepDone& event) {
  if (next_) next_->stepDone(event);
}
void FrameFileWriter::cutMeasured(const continuity::CutMetrics& metrics) {
  if (next_) next_->cutMeasured(metrics);
}
void FrameFileWriter::memorySampled(int cutIndex, const memory::MemorySample& sample) {
  if (next_) next_->memorySampled(cutIndex, sample);
}
void FrameFileWriter::shotFinished(const render::ShotFinished& event) {
  if (next_) next_->shotFinished(event);
}
void FrameFileWriter::sequenceFinished(const render::SequenceFinished& event) {
  if (next_) next_->sequenceFinished(event);
}
void FrameFileWriter::warning(const render::RenderWarning& event) {
  if (next_) next_->warning(event);
}
void FrameFileWriter::failed(const render::RenderFailure& event) {
  if (next_) next_->failed(event);
}

}  // namespace shotchain::exporting
