#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <cstdint>
#include <filesystem>
#include <functional>

#include "render/prompt_embedding_folder.h"

class QDoubleSpinBox;
class QLabel;
class QPushButton;

namespace shotchain::ui {

// Preferences' prompt embeddings: their folder, what it holds (counted off the GUI thread), the most it may hold,
// and Clear (asked first).
class PromptCacheBox : public QWidget {
  Q_OBJECT

 public:
  PromptCacheBox(std::filesystem::path folder, std::uint64_t maxBytes, QWidget* parent = nullptr);

  std::uint64_t maxBytes() const;
  // Asked before Clear removes anything; the default asks with a message box.
  void setConfirmation(std::function<bool()> confirm) { confirm_ = std::move(confirm); }
  QString usageText() const;
  QString folderText() const;
  // The Clear button's action.
  void clearKept();

 Q_SIGNALS:
  void usageShown();
  void cleared();

 private:
  void count(bool clearFirst);
  void showUsage(const render::FolderUsage& usage);

  std::filesystem::path folder_;
  QLabel* folderLabel_;
  QLabel* usage_;
  QDoubleSpinBox* max_;
  QPushButton* clear_;
  QFutureWatcher<render::FolderUsage> watcher_;
  bool clearing_ = false;
  std::function<bool()> confirm_;
};

}  // namespace shotchain::ui
