#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QRegularExpression>
#include <QUrl>

#include "document/sequence_document.h"
#include "monitor/cut_table_model.h"
#include "monitor/vram_panel.h"
#include "preview/preview_panel.h"
#include "render/render_state.h"
#include "sequence/validation.h"
#include "widgets/message_banner.h"

// Starting a render and following it: progress, log, preview, memory and cut measurements.
namespace shotchain::ui {
namespace {

QString eta(double seconds) {
  if (seconds < 0) return QObject::tr("estimating…");
  const int s = static_cast<int>(seconds + 0.5);
  return s >= 3600 ? QStringLiteral("%1:%2:%3")
                         .arg(s / 3600)
                         .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
                         .arg(s % 60, 2, 10, QLatin1Char('0'))
                   : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

}  // namespace

void MainWindow::connectRenderer() {
  RenderController* c = controller_;
  connect(c, &RenderController::renderingChanged, this, &MainWindow::updateRenderActions);
  connect(c, &RenderController::planReady, this, [this](const memory::MemoryPlan& plan) {
    vram_->setPlan(plan);
    log(tr("Plan: %1 — %2").arg(QString::fromLatin1(toString(plan.chosen)), QString::fromStdString(plan.reason)));
  });
  connect(c, &RenderController::shotStarted, this, [this](const render::ShotStarted& shot) {
    renderState_->shotStarted(shot);
    log(shot.reused ? tr("Shot %1/%2 %3: unchanged, reusing what is on disk")
                          .arg(shot.index + 1)
                          .arg(shot.count)
                          .arg(QString::fromStdString(shot.name))
                    : tr("Shot %1/%2 %3: %4 frames, %5 steps")
                          .arg(shot.index + 1)
                          .arg(shot.count)
                          .arg(QString::fromStdString(shot.name))
                          .arg(shot.frames)
                          .arg(shot.steps));
  });
  connect(c, &RenderController::stepDone, this,
          [this](int shot, int step, int steps, const QImage& image, const QVector<QImage>& frames) {
            renderState_->stepDone(shot, step, steps);
            // A shot whose decoded frames have started to arrive (a stream) keeps showing them: the newest decoded
            // frame wins over a preview of the same shot. The preview decoder's frames play until the next ones;
            // between them the latent preview is not shown (it would replace film-like frames with a mosaic).
            if (shot == liveDecodedShot_) return;
            if (!frames.isEmpty()) {
              preview_->showLiveFrames(
                  frames, tr("%1 · step %2/%3 · preview decoder").arg(shotLabel(shot)).arg(step).arg(steps));
              livePreviewShot_ = shot;
            } else if (!image.isNull() && shot != livePreviewShot_) {
              preview_->showLive(image,
                                 tr("%1 · step %2/%3 · latent preview").arg(shotLabel(shot)).arg(step).arg(steps));
            }
            if (!frames.isEmpty() || !image.isNull()) controller_->previewShown();
          });
  connect(c, &RenderController::progress, this, [this](int shot, int count, int step, int steps, double seconds) {
    progress_->setRange(0, std::max(1, count * std::max(1, steps)));
    progress_->setValue(shot * std::max(1, steps) + step);
    progressText_->setText(
        tr("Shot %1/%2 · step %3/%4 · ETA %5").arg(shot + 1).arg(count).arg(step).arg(steps).arg(eta(seconds)));
  });
  connect(c, &RenderController::framesDecoded, this,
          [this](int shot, int first, int total, const QVector<QImage>& frames) {
            renderState_->framesDecoded(shot, first, total, frames);
            if (!frames.isEmpty()) {
              liveDecodedShot_ = shot;
              preview_->showLive(frames.back(),
                                 tr("%1 · decoded %2/%3").arg(shotLabel(shot)).arg(first + frames.size()).arg(total));
            }
          });
  connect(c, &RenderController::cutMeasured, this, [this](const continuity::CutMetrics& cut) {
    renderState_->cutMeasured(cut);
    log(tr("Cut %1 → %2: MAD ratio %3")
            .arg(QString::fromStdString(cut.fromShotId), QString::fromStdString(cut.toShotId))
            .arg(cut.madRatio ? QString::number(*cut.madRatio, 'f', 2) : QStringLiteral("—")));
  });
  connect(c, &RenderController::memorySampled, vram_, &VramPanel::addCutSample);
  connect(c, &RenderController::shotFinished, this, [this](const render::ShotFinished& shot) {
    renderState_->shotFinished(shot);
    if (shot.stream) vram_->addStreamShot(shot.index, *shot.stream);
    if (!shot.reused)
      log(tr("Shot %1 done: %2 frames in %3 s (sampling %4 s, decoding %5 s)")
              .arg(QString::fromStdString(shot.id))
              .arg(shot.framesWritten)
              .arg(shot.seconds, 0, 'f', 1)
              .arg(shot.sampleSeconds, 0, 'f', 1)
              .arg(shot.decodeSeconds, 0, 'f', 1));
  });
  connect(c, &RenderController::warning, this, [this](const render::RenderWarning& w) {
    log(tr("Warning (%1): %2").arg(QString::fromStdString(w.kind), QString::fromStdString(w.message)));
    if (!banner_->isVisible() || banner_->kind() != MessageBanner::Kind::Error)
      banner_->showMessage(MessageBanner::Kind::Warning, QString::fromStdString(w.message));
  });
  connect(c, &RenderController::failed, this, [this](int shot, QString message, const QString& details) {
    renderState_->shotFailed(shot);
    const QString where = shot >= 0 ? tr("Shot %1 failed").arg(shotLabel(shot)) : tr("The render could not start");
    // The shot is named in `where`; core's own "shot N (id): " in front of its message would name it again.
    static const QRegularExpression named(QStringLiteral("^(shot \\d+ \\([^)]*\\): )+"));
    if (shot >= 0) message.remove(named);
    log(tr("Error: %1: %2").arg(where, message));
    banner_->showMessage(MessageBanner::Kind::Error, tr("<b>%1:</b> %2").arg(where, message.toHtmlEscaped()),
                         details.isEmpty() ? message : message + QLatin1Char('\n') + details);
  });
  connect(c, &RenderController::finished, this, &MainWindow::renderFinished);
}

bool MainWindow::renderSequence() {
  if (controller_->isRendering()) return false;
  // What is being typed is part of what renders: the field's edit is committed as a click elsewhere would commit
  // it (its focus ends), then the cursor goes back to it.
  const QPointer<QWidget> typing = QApplication::focusWidget();
  if (typing) {
    typing->clearFocus();
    typing->setFocus();
  }
  const Diagnostics& problems = document_->resolved().problems;
  if (hasErrors(problems)) {
    banner_->showMessage(MessageBanner::Kind::Error,
                         tr("<b>The sequence has problems;</b> fix them to render (see Problems)."),
                         QString::fromStdString(formatAll(problems, document_->displayName().toStdString())));
    return false;
  }
  if (document_->sequence().shots.empty()) {
    banner_->showMessage(MessageBanner::Kind::Warning, tr("There is nothing to render yet: add a shot first."));
    return false;
  }
  banner_->hide();
  vram_->clearRun();
  renderState_->renderStarted(document_->sequence());
  liveDecodedShot_ = -1;
  livePreviewShot_ = -1;
  preview_->setLive(true);
  progress_->setValue(0);
  progressText_->setText(tr("Starting…"));
  std::vector<int> shotSteps;
  for (const resolve::ResolvedShot& shot : document_->resolved().shots)
    shotSteps.push_back(shot.enabled ? shot.steps : 0);
  controller_->start(document_->sequence(), document_->filePath(), std::move(shotSteps));
  log(tr("Render started → %1").arg(QDir::toNativeSeparators(controller_->outputDirectory())));
  return true;
}

void MainWindow::renderFinished(const render::SequenceFinished& result, bool failed) {
  renderState_->renderFinished();
  preview_->setLive(false);
  if (failed) return;  // the banner already shows the error
  const QString folder = controller_->outputDirectory();
  if (result.cancelled) {
    banner_->showMessage(MessageBanner::Kind::Warning,
                         tr("Render stopped after %1 shot(s). Render again to continue: finished shots are kept.")
                             .arg(result.shotsRendered + result.shotsReused));
    log(tr("Render stopped."));
    return;
  }
  QList<QAction*> actions;
  auto* openFolder = new QAction(tr("Open folder"), banner_);
  connect(openFolder, &QAction::triggered, this, [folder] { QDesktopServices::openUrl(QUrl::fromLocalFile(folder)); });
  actions << openFolder;
  const QStringList movies = QDir(folder).entryList({QStringLiteral("*.mp4")}, QDir::Files, QDir::Time);
  if (!movies.isEmpty()) {
    auto* play = new QAction(tr("Play %1").arg(movies.front()), banner_);
    const QString movie = QDir(folder).filePath(movies.front());
    connect(play, &QAction::triggered, this, [this, movie] {
      if (QDesktopServices::openUrl(QUrl::fromLocalFile(movie))) return;
      banner_->showMessage(
          MessageBanner::Kind::Warning,
          tr("No program on this computer opens .mp4 files, so the movie cannot be played from here. It is at "
             "%1; the studio's viewer plays the sequence (Space).")
              .arg(QDir::toNativeSeparators(movie).toHtmlEscaped()));
      log(tr("No video player for %1.").arg(QDir::toNativeSeparators(movie)));
    });
    actions << play;
  }
  const QString text = tr("<b>Rendered.</b> %1 shot(s) rendered, %2 reused, in %3 s → %4")
                           .arg(result.shotsRendered)
                           .arg(result.shotsReused)
                           .arg(result.seconds, 0, 'f', 1)
                           .arg(QDir::toNativeSeparators(folder).toHtmlEscaped());
  banner_->showMessage(MessageBanner::Kind::Info, text, {}, actions);
  log(tr("Render finished in %1 s.").arg(result.seconds, 0, 'f', 1));
}

void MainWindow::updateRenderFolders() {
  const render::RenderOptions options = controller_->optionsFor(document_->sequence(), document_->filePath());
  renderState_->setFolders(document_->sequence(), options.sequenceDirectory.string(), options.outputDirectory.string());
}

void MainWindow::updateRenderActions() {
  const bool rendering = controller_->isRendering();
  renderAction_->setEnabled(!rendering);
  stopNowAction_->setEnabled(rendering);
  stopAfterAction_->setEnabled(rendering);
  progress_->setVisible(rendering);
  progressText_->setVisible(rendering);
  policy_->setEnabled(!rendering);
}

}  // namespace shotchain::ui
