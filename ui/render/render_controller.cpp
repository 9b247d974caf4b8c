#include "render/render_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "memory/memory_probe.h"
#include "render/render_worker.h"

namespace shotchain::ui {
namespace {

void registerEventTypes() {
  qRegisterMetaType<memory::MemoryPlan>();
  qRegisterMetaType<memory::MemorySample>();
  qRegisterMetaType<continuity::CutMetrics>();
  qRegisterMetaType<render::ShotStarted>();
  qRegisterMetaType<render::ShotFinished>();
  qRegisterMetaType<render::SequenceFinished>();
  qRegisterMetaType<render::RenderWarning>();
  qRegisterMetaType<render::RenderOptions>();
  qRegisterMetaType<Sequence>();
  qRegisterMetaType<QVector<QImage>>();
  qRegisterMetaType<render::PromptPrecompute>();
}

}  // namespace

RenderController::RenderController(OptionsHook hook, QObject* parent)
    : QObject(parent),
      hook_(std::move(hook)),
      worker_(new RenderWorker(*this)),
      promptWorker_(new PromptWorker(*this)) {
  registerEventTypes();
  thread_.setObjectName(QStringLiteral("render"));
  worker_->moveToThread(&thread_);
  promptWorker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(&thread_, &QThread::finished, promptWorker_, &QObject::deleteLater);
  thread_.start();
  QMetaObject::invokeMethod(worker_, &RenderWorker::initialise, Qt::QueuedConnection);
}

RenderController::~RenderController() {
  if (render::Renderer* renderer = worker_->renderer()) renderer->requestStop(render::StopRequest::Now);
  ++promptJob_;
  thread_.quit();
  thread_.wait();
}

QString RenderController::outputDirectoryFor(const QString& sequencePath) {
  if (sequencePath.isEmpty())
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/untitled.render");
  const QFileInfo info(sequencePath);
  return info.absoluteDir().filePath(info.completeBaseName() + QStringLiteral(".render"));
}

render::RenderOptions RenderController::optionsFor(const Sequence&, const QString& sequencePath) const {
  render::RenderOptions options;
  options.outputDirectory = outputDirectoryFor(sequencePath).toStdString();
  if (!sequencePath.isEmpty()) options.sequenceDirectory = QFileInfo(sequencePath).absolutePath().toStdString();
  options.device = device_.toStdString();
  options.reuse = true;
  options.previews = true;
  options.promptEmbeddingBytes = promptEmbeddingBytes_;
  if (hook_) hook_(options);
  return options;
}

bool RenderController::start(const Sequence& sequence, const QString& sequencePath, std::vector<int> shotSteps) {
  if (rendering_) return false;
  const render::RenderOptions options = optionsFor(sequence, sequencePath);
  outputDirectory_ = QString::fromStdString(options.outputDirectory.string());
  rendering_ = true;
  failedThisRender_ = false;
  shotCount_ = static_cast<int>(sequence.shots.size());
  shotSteps_ = std::move(shotSteps);
  stepSecondsTotal_ = 0;
  stepsTimed_ = 0;
  Q_EMIT renderingChanged(true);
  // The text encoder a prompt job kept is freed before the render plans its memory.
  releasePromptEncoder();
  QMetaObject::invokeMethod(worker_, "render", Qt::QueuedConnection, Q_ARG(shotchain::Sequence, sequence),
                            Q_ARG(shotchain::render::RenderOptions, options));
  return true;
}

void RenderController::stop(render::StopRequest request) {
  if (render::Renderer* renderer = worker_->renderer()) renderer->requestStop(request);
}

std::optional<memory::MemorySample> RenderController::sampleMemory() const {
  render::Renderer* renderer = worker_->renderer();
  if (renderer == nullptr) return std::nullopt;
  return renderer->probe()->sample();
}

void RenderController::previewShown() { worker_->previewTaken(); }

quint64 RenderController::precomputePrompts(const Sequence& sequence, const QString& sequencePath) {
  const quint64 job = ++promptJob_;
  QMetaObject::invokeMethod(promptWorker_, "encode", Qt::QueuedConnection, Q_ARG(shotchain::Sequence, sequence),
                            Q_ARG(shotchain::render::RenderOptions, optionsFor(sequence, sequencePath)),
                            Q_ARG(quint64, job));
  return job;
}

void RenderController::releasePromptEncoder() {
  QMetaObject::invokeMethod(promptWorker_, &PromptWorker::release, Qt::QueuedConnection);
}

void RenderController::onShotStarted(const render::ShotStarted& shot) {
  shotCount_ = shot.count;
  Q_EMIT shotStarted(shot);
  Q_EMIT progress(shot.index, shot.count, 0, shot.steps, -1);
}

void RenderController::onStepDone(int shotIndex, int step, int steps, double seconds, const QImage& preview,
                                  const QVector<QImage>& previewFrames) {
  stepSecondsTotal_ += seconds;
  ++stepsTimed_;
  const double mean = stepSecondsTotal_ / stepsTimed_;
  double stepsLeft = steps - step;
  for (std::size_t i = static_cast<std::size_t>(shotIndex) + 1; i < shotSteps_.size(); ++i) stepsLeft += shotSteps_[i];
  const double eta = mean * stepsLeft;
  Q_EMIT stepDone(shotIndex, step, steps, preview, previewFrames);
  Q_EMIT progress(shotIndex, shotCount_, step, steps, eta);
}

void RenderController::onFailed(int shotIndex, const QString& message, const QString& details) {
  failedThisRender_ = true;
  Q_EMIT failed(shotIndex, message, details);
}

void RenderController::onFinished(const render::SequenceFinished& result) {
  rendering_ = false;
  Q_EMIT finished(result, failedThisRender_);
  Q_EMIT renderingChanged(false);
}

}  // namespace shotchain::ui
