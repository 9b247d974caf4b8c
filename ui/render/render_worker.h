#pragma once

#include <QObject>

#include <atomic>
#include <memory>

#include "render/render_event_types.h"

namespace shotchain::ui {

class RenderController;

// Lives on the render thread and owns the Renderer (and with it the loaded model). It renders to
// disk (exporting::renderToDisk) and hands every renderer event (render::RenderObserver, the one
// list of them) to its controller's thread, queued and in order, with frames already QImages.
// Step previews are back-pressured: a new one is dropped while the GUI has not taken the last one.
class RenderWorker : public QObject {
  Q_OBJECT

 public:
  explicit RenderWorker(RenderController& controller);
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

 private:
  class Observer;
  // Calls controller.*method(values...) on the controller's thread, after everything posted before.
  template <class Method, class... Values>
  void post(Method method, Values... values);

  RenderController& controller_;
  std::unique_ptr<render::Renderer> owned_;
  std::atomic<render::Renderer*> renderer_{nullptr};
  std::atomic<bool> previewPending_{false};
};

}  // namespace shotchain::ui
