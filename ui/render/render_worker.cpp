#include "render/render_worker.h"

#include <exception>

#include "export/render_to_disk.h"

namespace shotchain::ui {

class RenderWorker::Observer : public render::RenderObserver {
 public:
  explicit Observer(RenderWorker& worker) : worker_(worker) {}

  void planReady(const MemoryPlan& plan) override { Q_EMIT worker_.planReady(plan); }
  void shotStarted(const render::ShotStarted& shot) override { Q_EMIT worker_.shotStarted(shot); }
  void stepDone(const render::StepDone& step) override {
    QImage preview;
    if (!step.preview.empty() && !worker_.previewPending_.exchange(true)) preview = toImage(step.preview);
    Q_EMIT worker_.stepDone(step.shotIndex, step.step, step.steps, step.seconds, preview);
  }
  void framesDecoded(const render::FramesDecoded& decoded) override {
    QVector<QImage> frames;
    frames.reserve(static_cast<qsizetype>(decoded.frames.size()));
    for (const auto& frame : decoded.frames) frames.push_back(toImage(frame));
    Q_EMIT worker_.framesDecoded(decoded.shotIndex, decoded.firstFrame, decoded.shotFrames, frames);
  }
  void cutMeasured(const continuity::CutMetrics& cut) override { Q_EMIT worker_.cutMeasured(cut); }
  void memorySampled(int cutIndex, const MemorySample& sample) override {
    Q_EMIT worker_.memorySampled(cutIndex, sample);
  }
  void shotFinished(const render::ShotFinished& shot) override {
    if (shot.reused) sendFramesFromDisk(shot);
    Q_EMIT worker_.shotFinished(shot);
  }
  void sequenceFinished(const render::SequenceFinished& result) override {
    finished_ = true;
    result_ = result;
  }
  void warning(const render::RenderWarning& w) override { Q_EMIT worker_.warning(w); }
  void failed(const render::RenderFailure& failure) override {
    failedReported_ = true;
    Q_EMIT worker_.failed(failure.shotIndex, QString::fromStdString(failure.message), {});
  }

  bool finished_ = false;
  bool failedReported_ = false;
  render::SequenceFinished result_;

 private:
  // A shot re-used from an earlier render streams no frames: read them back so the preview has them.
  void sendFramesFromDisk(const render::ShotFinished& shot) {
    const QVector<QImage> frames = readShotFrames(shot.directory, shot.framesWritten);
    if (!frames.isEmpty()) Q_EMIT worker_.framesDecoded(shot.index, 0, shot.framesWritten, frames);
  }

  RenderWorker& worker_;
};

RenderWorker::RenderWorker() = default;
RenderWorker::~RenderWorker() { renderer_.store(nullptr); }

void RenderWorker::initialise() {
  if (owned_) return;
  owned_ = std::make_unique<render::Renderer>();
  renderer_.store(owned_.get());
  Q_EMIT ready();
}

void RenderWorker::render(const Sequence& sequence, const render::RenderOptions& options) {
  initialise();
  previewPending_.store(false);
  Observer observer(*this);
  try {
    const exporting::RenderedToDisk rendered = exporting::renderToDisk(*owned_, sequence, options, observer);
    if (!observer.finished_) observer.result_ = rendered.summary.finished;
    if (rendered.outputs) {
      for (const std::string& message : rendered.outputs->warnings)
        Q_EMIT warning(render::RenderWarning{-1, "output", message});
    } else if (!rendered.outputsError.empty()) {
      Q_EMIT failed(-1, QString::fromStdString(rendered.outputsError), {});
      observer.result_ = {};
    }
  } catch (const render::RenderError& error) {
    const QString field = QString::fromStdString(error.field());
    Q_EMIT failed(-1, QString::fromUtf8(error.what()),
                  field.isEmpty() ? QString() : tr("Field or option at fault: %1").arg(field));
    observer.result_ = {};
  } catch (const std::exception& error) {
    Q_EMIT failed(-1, QString::fromUtf8(error.what()), {});
    observer.result_ = {};
  }
  observer.result_.outputDirectory = options.outputDirectory.string();
  Q_EMIT finished(observer.result_);
}

}  // namespace shotchain::ui
