#include "render/prompt_precomputer.h"

#include <set>

#include "document/sequence_document.h"
#include "render/render_controller.h"

namespace shotchain::ui {

PromptPrecomputer::PromptPrecomputer(SequenceDocument* document, RenderController* controller, QObject* parent)
    : QObject(parent), document_(document), controller_(controller) {
  rest_.setSingleShot(true);
  rest_.setInterval(kRestMs);
  keepEncoder_.setSingleShot(true);
  keepEncoder_.setInterval(kKeepEncoderMs);
  connect(&rest_, &QTimer::timeout, this, &PromptPrecomputer::start);
  connect(&keepEncoder_, &QTimer::timeout, this, [this] {
    controller_->releasePromptEncoder();
    Q_EMIT encoderReleased();
  });
  connect(document_, &SequenceDocument::changed, this, &PromptPrecomputer::schedule);
  connect(document_, &SequenceDocument::replaced, this, &PromptPrecomputer::schedule);
  connect(controller_, &RenderController::promptsPrecomputed, this, &PromptPrecomputer::done);
  connect(controller_, &RenderController::renderingChanged, this, [this](bool rendering) {
    if (!rendering) return schedule();
    rest_.stop();  // the render encodes what is left, and frees a kept encoder first
    keepEncoder_.stop();
  });
}

void PromptPrecomputer::setDelays(int restMs, int keepEncoderMs) {
  rest_.setInterval(restMs);
  keepEncoder_.setInterval(keepEncoderMs);
}

void PromptPrecomputer::schedule() {
  const QString now = state();
  if (now == encodedState_ || now == failedState_) return;
  rest_.start();
}

void PromptPrecomputer::forget() {
  encodedState_.clear();
  failedState_.clear();
  schedule();
}

QString PromptPrecomputer::state() const {
  const resolve::ResolvedSequence& resolved = document_->resolved();
  const models::ModelFiles& files = resolved.models.files;
  QStringList parts{controller_->device(), QString::fromStdString(files.textEncoder.string()),
                    QString::fromStdString(files.tokenizer.string()), QString::fromStdString(files.dit.string())};
  for (const resolve::ResolvedShot& shot : resolved.shots)
    if (shot.enabled) parts << QString::fromStdString(shot.prompt) << QString::fromStdString(shot.uncondPrompt);
  return parts.join(QChar(0));
}

void PromptPrecomputer::start() {
  if (controller_->isRendering() || document_->sequence().shots.empty()) return;
  for (const Diagnostic& d : document_->resolved().problems)
    if (d.isError() && d.path.starts_with("model")) return;  // the Problems list says why
  const QString now = state();
  if (now == encodedState_) return;
  keepEncoder_.stop();
  jobState_ = now;
  job_ = controller_->precomputePrompts(document_->sequence(), document_->filePath());
}

QString PromptPrecomputer::shotName(int index) const {
  const auto& shots = document_->sequence().shots;
  if (index < 0 || index >= static_cast<int>(shots.size())) return tr("shot %1").arg(index + 1);
  return QString::fromStdString(shots[static_cast<std::size_t>(index)].displayName());
}

void PromptPrecomputer::done(quint64 job, const render::PromptPrecompute& result, const QString& error) {
  if (job != job_) return;
  job_ = 0;
  if (!controller_->isRendering()) keepEncoder_.start();
  if (!error.isEmpty()) {
    failedState_ = jobState_;
    Q_EMIT statusMessage(
        tr("The prompts were not encoded ahead of the render (it encodes them itself): %1").arg(error));
  } else if (!result.stopped) {
    encodedState_ = jobState_;
  }
  if (!result.encoded.empty()) {
    std::set<int> indices;
    for (const render::PrecomputedPrompt& p : result.encoded) indices.insert(p.shot);
    QStringList shots;
    for (const int index : indices) shots << shotName(index);
    const QString seconds = QString::number(result.seconds, 'f', 1);
    if (result.encoded.size() == 1)
      Q_EMIT statusMessage((result.encoded.front().negative ? tr("Negative prompt encoded for %1 (%2 s)")
                                                            : tr("Prompt encoded for %1 (%2 s)"))
                               .arg(shots.front(), seconds));
    else
      Q_EMIT statusMessage(tr("%1 prompts encoded for %2 (%3 s)")
                               .arg(result.encoded.size())
                               .arg(shots.join(QStringLiteral(", ")), seconds));
  }
  Q_EMIT finished(result, error);
  schedule();  // edited meanwhile
}

}  // namespace shotchain::ui
