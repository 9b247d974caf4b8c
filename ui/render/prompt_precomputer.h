#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

#include "render/prompt_precompute.h"

namespace shotchain::ui {

class RenderController;
class SequenceDocument;

// Encodes the prompts of the document that no render has encoded yet, in the background once an edit has rested
// (a prompt typed, a shot added, other models), so that a render starts sampling at once. One job at a time, on
// the render thread (never beside a render); a newer edit supersedes it. The text encoder stays loaded while
// more edits are likely and is freed after a quiet spell. What it did goes to statusMessage; a failure is a
// message too, never a dialog: the render then encodes the prompts itself.
class PromptPrecomputer : public QObject {
  Q_OBJECT

 public:
  static constexpr int kRestMs = 1000;
  static constexpr int kKeepEncoderMs = 30000;

  PromptPrecomputer(SequenceDocument* document, RenderController* controller, QObject* parent = nullptr);

  // After an edit: a job once edits rest, unless every prompt of the document was encoded for these models.
  void schedule();
  // The embeddings were removed (Preferences › Clear): nothing counts as encoded any more.
  void forget();
  // Starts a job now (what the end of the rest does).
  void start();
  bool busy() const { return job_ != 0; }
  bool pending() const { return busy() || rest_.isActive(); }
  void setDelays(int restMs, int keepEncoderMs);

 Q_SIGNALS:
  void statusMessage(const QString& message);
  void finished(const shotchain::render::PromptPrecompute& result, const QString& error);
  void encoderReleased();

 private:
  void done(quint64 job, const render::PromptPrecompute& result, const QString& error);
  // Everything a job's outcome depends on, in one string: the models, the device, the prompts.
  QString state() const;
  QString shotName(int index) const;

  SequenceDocument* document_;
  RenderController* controller_;
  QTimer rest_;
  QTimer keepEncoder_;
  quint64 job_ = 0;  // the job in flight; 0: none
  QString jobState_;
  QString encodedState_;  // the state whose every prompt is kept
  QString failedState_;   // the state a job could not encode (tried again after the next edit)
};

}  // namespace shotchain::ui
