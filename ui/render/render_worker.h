#pragma once

#include <QImage>
#include <QObject>
#include <QString>
#include <QVector>

#include <atomic>
#include <memory>

#include "render/render_event_types.h"

namespace shotchain::ui {

// Lives on the render thread and owns the Renderer (and with it the loaded model). Every renderer
// event becomes a signal, delivered to the GUI through queued connections. Step previews are
// back-pressured: a new one is dropped while the GUI has not taken the last one.
class RenderWorker : public QObject {
  Q_OBJECT

 public:
  RenderWorker();
  ~RenderWorker() override;

  // Thread-safe: null until initialise() ran on the render thread.
  render::Renderer* renderer() const { return renderer_.load(); }
  // Called by the GUI once it has shown the last step preview.
  void previewTaken() { previewPending_.store(false); }

 public Q_SLOTS:
  void initialise();
  void render(const shotchain::Sequence& sequence, const shotchain::render::RenderOptions& options);

 Q_SIGNALS:
  void ready();
  void planReady(const shotchain::MemoryPlan& plan);
  void shotStarted(const shotchain::render::ShotStarted& shot);
  void stepDone(int shotIndex, int step, int steps, double seconds, const QImage& preview);
  void framesDecoded(int shotIndex, int firstFrame, int shotFrames, const QVector<QImage>& frames);
  void cutMeasured(const shotchain::continuity::CutMetrics& cut);
  void memorySampled(int cutIndex, const shotchain::MemorySample& sample);
  void shotFinished(const shotchain::render::ShotFinished& shot);
  void warning(const shotchain::render::RenderWarning& warning);
  void failed(int shotIndex, const QString& message, const QString& details);
  // Always the last signal of a render, also after a failure.
  void finished(const shotchain::render::SequenceFinished& result);

 private:
  class Observer;
  std::unique_ptr<render::Renderer> owned_;
  std::atomic<render::Renderer*> renderer_{nullptr};
  std::atomic<bool> previewPending_{false};
  friend class Observer;
};

}  // namespace shotchain::ui
