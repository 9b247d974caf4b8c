#include "render/render_worker.h"

#include <exception>

#include "export/render_to_disk.h"
#include "render/render_controller.h"

namespace shotchain::ui {

template <class Method, class... Values>
void RenderWorker::post(Method method, Values... values) {
  RenderController* controller = &controller_;
  QMetaObject::invokeMethod(
      controller, [controller, method, values...] { (controller->*method)(values...); }, Qt::QueuedConnection);
}

class RenderWorker::Observer : public render::RenderObserver {
 public:
  explicit Observer(RenderWorker& worker) : worker_(worker) {}

  void planReady(const memory::MemoryPlan& plan) override { worker_.post(&RenderController::planReady, plan); }
  void shotStarted(const render::ShotStarted& shot) override { worker_.post(&RenderController::onShotStarted, shot); }
  void stepDone(const render::StepDone& step) override {
    QImage preview;
    QVector<QImage> frames;
    // One preview in flight at a time: a step whose predecessor's is still waiting for the GUI sends none.
    if ((!step.preview.empty() || !step.previewFrames.empty()) && !worker_.previewPending_.exchange(true)) {
      if (!step.preview.empty()) preview = toImage(step.preview);
      frames.reserve(static_cast<qsizetype>(step.previewFrames.size()));
      for (const auto& frame : step.previewFrames) frames.push_back(toImage(frame));
    }
    worker_.post(&RenderController::onStepDone, step.shotIndex, step.step, step.steps, step.seconds, preview, frames);
  }
  void framesDecoded(const render::FramesDecoded& decoded) override {
    QVector<QImage> frames;
    frames.reserve(static_cast<qsizetype>(decoded.frames.size()));
    for (const auto& frame : decoded.frames) frames.push_back(toImage(frame));
    worker_.post(&RenderController::framesDecoded, decoded.shotIndex, decoded.firstFrame, decoded.shotFrames, frames);
  }
  void cutMeasured(const continuity::CutMetrics& cut) override { worker_.post(&RenderController::cutMeasured, cut); }
  void memorySampled(int cutIndex, const memory::MemorySample& sample) override {
    worker_.post(&RenderController::memorySampled, cutIndex, sample);
  }
  void shotFinished(const render::ShotFinished& shot) override {
    if (shot.reused) sendFramesFromDisk(shot);
    worker_.post(&RenderController::shotFinished, shot);
  }
  void sequenceFinished(const render::SequenceFinished& result) override {
    finished_ = true;
    result_ = result;
  }
  void warning(const render::RenderWarning& w) override { worker_.post(&RenderController::warning, w); }
  void failed(const render::RenderFailure& failure) override { fail(failure.shotIndex, failure.message); }

  void fail(int shotIndex, const std::string& message, const QString& details = {}) {
    worker_.post(&RenderController::onFailed, shotIndex, QString::fromStdString(message), details);
  }

  bool finished_ = false;
  render::SequenceFinished result_;

 private:
  // A shot re-used from an earlier render streams no frames: read them back so the preview has them.
  void sendFramesFromDisk(const render::ShotFinished& shot) {
    const QVector<QImage> frames = readShotFrames(shot.directory, shot.framesWritten);
    if (!frames.isEmpty()) worker_.post(&RenderController::framesDecoded, shot.index, 0, shot.framesWritten, frames);
  }

  RenderWorker& worker_;
};

RenderWorker::RenderWorker(RenderController& controller) : controller_(controller) {}
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
        observer.warning(render::RenderWarning{-1, "output", message});
    } else if (!rendered.outputsError.empty()) {
      observer.fail(-1, rendered.outputsError);
      observer.result_ = {};
    }
  } catch (const render::RenderError& error) {
    const QString field = QString::fromStdString(error.field());
    observer.fail(-1, error.what(), field.isEmpty() ? QString() : tr("Field or option at fault: %1").arg(field));
    observer.result_ = {};
  } catch (const std::exception& error) {
    observer.fail(-1, error.what());
    observer.result_ = {};
  }
  observer.result_.outputDirectory = options.outputDirectory.string();
  post(&RenderController::onFinished, observer.result_);
}

}  // namespace shotchain::ui
