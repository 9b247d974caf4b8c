#include "render/prompt_worker.h"

#include <exception>

#include "render/render_controller.h"

namespace shotchain::ui {

PromptWorker::PromptWorker(RenderController& controller) : controller_(controller) {}
PromptWorker::~PromptWorker() = default;

void PromptWorker::encode(const Sequence& sequence, const render::RenderOptions& options, quint64 job) {
  const auto superseded = [this, job] { return controller_.promptJob() != job; };
  render::PromptPrecompute result;
  QString error;
  if (superseded()) {
    result.stopped = true;
  } else {
    try {
      result = render::precomputePrompts(sequence, options, encoder_, superseded);
    } catch (const std::exception& e) {
      encoder_.reset();
      error = QString::fromStdString(e.what());
    }
  }
  RenderController* controller = &controller_;
  QMetaObject::invokeMethod(
      controller, [controller, job, result, error] { Q_EMIT controller->promptsPrecomputed(job, result, error); },
      Qt::QueuedConnection);
}

void PromptWorker::release() { encoder_.reset(); }

}  // namespace shotchain::ui
