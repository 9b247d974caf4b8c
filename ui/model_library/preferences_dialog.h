#pragma once

#include <QDialog>
#include <QStringList>

class QListWidget;

namespace shotchain::ui {

// Edit › Preferences: the model folders (ComfyUI models folders or flat folders of weights) the
// model browser lists and the ComfyUI import looks loader file names up in.
class PreferencesDialog : public QDialog {
  Q_OBJECT

 public:
  explicit PreferencesDialog(const QStringList& modelFolders, QWidget* parent = nullptr);
  QStringList modelFolders() const;
  void addFolder(const QString& folder);

 private:
  QListWidget* folders_;
};

}  // namespace shotchain::ui
