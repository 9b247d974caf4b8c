#include "main_window.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>

#include "document/sequence_document.h"
#include "interop/comfy_import.h"
#include "models/model_catalogue.h"
#include "models/model_set_facts.h"
#include "studio_settings.h"
#include "util/bounded_file.h"
#include "widgets/message_banner.h"

// File › Import ComfyUI workflow: a workflow becomes a new untitled document.
namespace shotchain::ui {
void MainWindow::importComfyWithDialog() {
  if (!confirmDiscard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Import ComfyUI workflow"), QString(),
                                                    tr("ComfyUI workflows (*.json);;All files (*)"));
  if (!path.isEmpty()) importComfyFile(path);
}

bool MainWindow::importComfyFile(const QString& path) {
  interop::ComfyImport imported;
  interop::ComfyImportOptions options;
  for (const QString& folder : settings_->modelFolders()) options.modelFolders.emplace_back(folder.toStdString());
  options.readModelFile = models::describeModelFile;
  options.familyFromName = models::familyFromFileName;
  options.families = models::comfyWordsOfFamilies();
  try {
    imported =
        interop::importComfyWorkflow(util::readRegularFile(path.toStdString(), 64u << 20), path.toStdString(), options);
  } catch (const std::exception& error) {
    banner_->showMessage(MessageBanner::Kind::Error,
                         tr("<b>Cannot import the workflow</b> (the open sequence is unchanged): %1")
                             .arg(QString::fromStdString(error.what()).toHtmlEscaped()));
    statusBar()->showMessage(QString::fromStdString(error.what()));
    return false;
  }
  imported.sequence.settings.name = QFileInfo(path).completeBaseName().toStdString();
  QStringList details;
  for (const std::string& problem : imported.problems)
    details << tr("Left out: %1").arg(QString::fromStdString(problem));
  for (const interop::UnmappedNode& n : imported.unmapped)
    details << tr("Not mapped: node %1 (%2): %3")
                   .arg(QString::fromStdString(n.id), QString::fromStdString(n.type), QString::fromStdString(n.why));
  for (const std::string& note : imported.notes) details << tr("Note: %1").arg(QString::fromStdString(note));
  const int shots = static_cast<int>(imported.sequence.shots.size());
  document_->reset(std::move(imported.sequence), QString(), true);
  updateTitle();
  QString summary = tr("Imported %1: %n shot(s) of %2", nullptr, shots)
                        .arg(QFileInfo(path).fileName(), QString::fromStdString(imported.models));
  if (!imported.problems.empty())
    summary += tr("; %n sampler(s) left out", nullptr, static_cast<int>(imported.problems.size()));
  summary += tr("; %n node(s) not carried over", nullptr, static_cast<int>(imported.unmapped.size()));
  statusBar()->showMessage(summary);
  for (const QString& line : details) log(line);
  // A banner, not a modal box: the sequence is there to look at while the list is read.
  if (!details.isEmpty())
    banner_->showMessage(
        imported.problems.empty() ? MessageBanner::Kind::Info : MessageBanner::Kind::Warning,
        summary.toHtmlEscaped() + tr(". Save the sequence to keep it; the workflow file was not changed "
                                     "(Details lists what was not carried over; so does the log)."),
        details.join('\n'));
  return true;
}

}  // namespace shotchain::ui
