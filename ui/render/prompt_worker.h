#pragma once

#include <QObject>

#include <memory>

#include "render/prompt_precompute.h"
#include "render/render_event_types.h"

namespace shotchain::ui {

class RenderController;

// Lives on the render thread beside the RenderWorker, so a prompt job and a render never run at once: a render
// posted while a job runs starts when the job is done. Keeps the text encoder a job loaded for the next one,
// until release().
class PromptWorker : public QObject {
  Q_OBJECT

 public:
  explicit PromptWorker(RenderController& controller);
  ~PromptWorker() override;

 public Q_SLOTS:
  // Job `job` of the controller (render/prompt_precompute.h); it stops between prompts once a newer one is asked.
  void encode(const shotchain::Sequence& sequence, const shotchain::render::RenderOptions& options, quint64 job);
  void release();

 private:
  RenderController& controller_;
  render::KeptPromptEncoder encoder_;
};

}  // namespace shotchain::ui

Q_DECLARE_METATYPE(shotchain::render::PromptPrecompute)
