#include "main_window.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>

#include "document/sequence_document.h"
#include "model_library/model_browser.h"
#include "model_library/preferences_dialog.h"
#include "model_library/prompt_cache_box.h"
#include "models/model_set_facts.h"
#include "render/prompt_precomputer.h"
#include "studio_settings.h"

// The model folders of the preferences, the model browser and the first-run question.
namespace shotchain::ui {
QDockWidget* MainWindow::createModelDock() {
  modelBrowser_ = new ModelBrowser(document_, settings_, this);
  connect(modelBrowser_, &ModelBrowser::preferencesRequested, this, &MainWindow::showPreferences);
  connect(modelBrowser_, &ModelBrowser::statusMessage, this,
          [this](const QString& message) { statusBar()->showMessage(message, 8000); });
  auto* dock = new QDockWidget(tr("Models"), this);
  dock->setObjectName(QStringLiteral("ModelsDock"));
  dock->setWidget(modelBrowser_);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  viewMenu_->addAction(dock->toggleViewAction());
  return dock;
}

void MainWindow::showPreferences() {
  PreferencesDialog dialog(settings_->modelFolders(), settings_->promptEmbeddingBytes(), this);
  connect(dialog.promptCache(), &PromptCacheBox::cleared, prompts_, &PromptPrecomputer::forget);
  if (preferencesHook_)
    preferencesHook_(dialog);
  else if (!dialogsAllowed() || dialog.exec() != QDialog::Accepted)
    return;
  settings_->setModelFolders(dialog.modelFolders());
  settings_->setPromptEmbeddingBytes(dialog.promptCache()->maxBytes());
  controller_->setPromptEmbeddingBytes(dialog.promptCache()->maxBytes());
  modelBrowser_->rescan();
}

void MainWindow::offerModelFolders() {
  if (settings_->modelFoldersAsked() || !settings_->modelFolders().isEmpty()) return;
  settings_->setModelFoldersAsked();
  if (!dialogsAllowed()) return;
  QStringList families;
  for (const models::FamilyKnowledge* family : models::ditFamilyKnowledge())
    families << QString::fromUtf8(family->name);
  QMessageBox box(
      QMessageBox::Question, tr("Your models"),
      tr("ShotChain renders the built-in demo model as it is. Do you have weights of %1, or LoRAs, in a ComfyUI "
         "models folder? Add it, and the Models panel shows what it holds and which files a sequence will use. "
         "(Edit › Preferences changes it later.)")
          .arg(families.join(QStringLiteral("; "))),
      QMessageBox::NoButton, this);
  QPushButton* add = box.addButton(tr("Add Models Folder…"), QMessageBox::AcceptRole);
  box.addButton(tr("Not Now"), QMessageBox::RejectRole);
  box.exec();
  if (box.clickedButton() != static_cast<QAbstractButton*>(add)) return;
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Models folder"));
  if (dir.isEmpty()) return;
  settings_->setModelFolders({dir});
  modelBrowser_->rescan();
}

}  // namespace shotchain::ui
