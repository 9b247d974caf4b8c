#pragma once

#include <QDialog>
#include <QStringList>

#include <cstdint>

class QListWidget;

namespace shotchain::ui {

class PromptCacheBox;

// Edit › Preferences: the model folders (ComfyUI models folders or flat folders of weights) the
// model browser lists and the ComfyUI import looks loader file names up in; the prompt embeddings kept on disk.
class PreferencesDialog : public QDialog {
  Q_OBJECT

 public:
  PreferencesDialog(const QStringList& modelFolders, std::uint64_t promptEmbeddingBytes, QWidget* parent = nullptr);
  QStringList modelFolders() const;
  void addFolder(const QString& folder);
  PromptCacheBox* promptCache() const { return promptCache_; }

 private:
  QListWidget* folders_;
  PromptCacheBox* promptCache_;
};

}  // namespace shotchain::ui
