#include "main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>
#include <QTimer>
#include <QUrl>

#include "document/autosave.h"
#include "document/sequence_document.h"
#include "render/render_state.h"
#include "sequence/sequence_io.h"
#include "studio_settings.h"

// New, open (with recovery), recent files, save, close and dropped sequence files.
namespace shotchain::ui {
namespace {

const char* const kFileFilter = "ShotChain sequences (*.json);;All files (*)";

QString sequencePathFrom(const QMimeData* mime) {
  if (mime == nullptr || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls())
    if (url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".json"), Qt::CaseInsensitive))
      return url.toLocalFile();
  return {};
}

}  // namespace

void MainWindow::newDocument() {
  Sequence sequence;
  sequence.settings.model.builtin = "demo";
  document_->reset(std::move(sequence), QString());
  updateTitle();
}

void MainWindow::offerUntitledRecovery() {
  const auto recovery = Autosave::pendingRecovery(QString());
  if (!recovery) return;
  const bool accept =
      recoveryPrompt_ ? recoveryPrompt_(*recovery)
                      : dialogsAllowed() &&
                            QMessageBox::question(
                                this, tr("Recover unsaved work?"),
                                tr("An untitled sequence was not saved when the studio last closed. Recover it?")) ==
                                QMessageBox::Yes;
  const LoadResult result = loadSequenceFile(recovery->toStdString());
  if (accept && result.ok()) {
    document_->reset(*result.sequence, QString(), true);
    updateTitle();
  } else {
    QFile::remove(*recovery);
  }
}

bool MainWindow::openFile(const QString& path) {
  const LoadResult result = loadSequenceFile(path.toStdString());
  if (!result.ok()) {
    QMessageBox box(QMessageBox::Warning, tr("Cannot open sequence"),
                    tr("%1 has problems and was not opened; the file was not changed.").arg(path), QMessageBox::Ok,
                    this);
    box.setDetailedText(QString::fromStdString(formatAll(result.diagnostics, path.toStdString())));
    if (dialogsAllowed()) box.exec();
    statusBar()->showMessage(QString::fromStdString(result.diagnostics.front().format(path.toStdString())));
    return false;
  }
  Sequence sequence = *result.sequence;
  bool recovered = false;
  if (const auto recovery = Autosave::pendingRecovery(path)) {
    const bool accept =
        recoveryPrompt_ ? recoveryPrompt_(*recovery)
                        : dialogsAllowed() && QMessageBox::question(
                                                  this, tr("Recover unsaved changes?"),
                                                  tr("%1 has changes that were not saved when the studio last closed. "
                                                     "Recover them?")
                                                      .arg(QFileInfo(path).fileName())) == QMessageBox::Yes;
    const LoadResult backup = loadSequenceFile(recovery->toStdString());
    if (accept && backup.ok()) {
      sequence = *backup.sequence;
      recovered = true;
    } else {
      QFile::remove(*recovery);
    }
  }
  document_->reset(std::move(sequence), path, recovered);
  settings_->addRecentFile(path);
  updateRecentMenu();
  updateTitle();
  statusBar()->showMessage(recovered ? tr("Recovered unsaved changes of %1").arg(path) : tr("Opened %1").arg(path),
                           5000);
  return true;
}

void MainWindow::openWithDialog() {
  if (!confirmDiscard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open sequence"), QString(), tr(kFileFilter));
  if (!path.isEmpty()) openFile(path);
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  const QStringList files = settings_->recentFiles();
  for (const QString& file : files) {
    QAction* action = recentMenu_->addAction(QFileInfo(file).fileName());
    action->setToolTip(file);
    connect(action, &QAction::triggered, this, [this, file] {
      if (!confirmDiscard()) return;
      if (!QFileInfo::exists(file)) {
        settings_->removeRecentFile(file);
        updateRecentMenu();
        reportRefusal(tr("%1 no longer exists").arg(file));
        return;
      }
      openFile(file);
    });
  }
  recentMenu_->setEnabled(!files.isEmpty());
}

bool MainWindow::saveTo(const QString& path) {
  const bool wasUntitled = document_->filePath().isEmpty();
  const QString untitledRenders =
      QString::fromStdString(controller_->optionsFor(document_->sequence(), {}).outputDirectory.string());
  try {
    document_->saveAs(path);
  } catch (const std::exception& error) {
    if (dialogsAllowed()) QMessageBox::critical(this, tr("Save failed"), QString::fromUtf8(error.what()));
    statusBar()->showMessage(QString::fromUtf8(error.what()));
    return false;
  }
  autosave_->discard();
  // The first save takes the untitled sequence's renders along, so that what was rendered stays rendered.
  const QString renders =
      QString::fromStdString(controller_->optionsFor(document_->sequence(), path).outputDirectory.string());
  if (wasUntitled && !controller_->isRendering() && renders != untitledRenders && QFileInfo::exists(untitledRenders) &&
      !QFileInfo::exists(renders) && QDir().rename(untitledRenders, renders)) {
    log(tr("The renders of the untitled sequence moved with it to %1").arg(QDir::toNativeSeparators(renders)));
    renderState_->clear();
    updateRenderFolders();
  }
  settings_->addRecentFile(path);
  updateRecentMenu();
  statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  return true;
}

bool MainWindow::save() {
  if (document_->filePath().isEmpty()) return saveAs();
  return saveTo(document_->filePath());
}

bool MainWindow::saveAs() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save sequence"), document_->filePath(), tr(kFileFilter));
  return !path.isEmpty() && saveAsFile(path);
}

bool MainWindow::saveAsFile(QString path) {
  if (!path.endsWith(QStringLiteral(".json"))) path += QStringLiteral(".json");
  const QString untitledRecovery = document_->filePath().isEmpty() ? Autosave::recoveryPathFor(QString()) : QString();
  const bool saved = saveTo(path);
  if (saved && !untitledRecovery.isEmpty()) QFile::remove(untitledRecovery);
  return saved;
}

bool MainWindow::confirmDiscard() {
  if (!document_->isModified()) return true;
  if (!dialogsAllowed()) return true;
  const auto answer =
      QMessageBox::warning(this, tr("Unsaved changes"), tr("%1 has unsaved changes.").arg(document_->displayName()),
                           QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirmDiscard()) return event->ignore();
  if (controller_->isRendering()) controller_->stop(render::StopRequest::Now);
  settings_->setWindowLayout(saveGeometry(), saveState());
  autosave_->discard();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!sequencePathFrom(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = sequencePathFrom(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  // Open after the drop returns, so a dialog does not run inside the drag's event loop.
  QTimer::singleShot(0, this, [this, path] {
    if (confirmDiscard()) openFile(path);
  });
}

}  // namespace shotchain::ui
