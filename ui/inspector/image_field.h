#pragma once

#include <QString>
#include <QWidget>

#include <filesystem>

class QLabel;
class QLineEdit;

namespace shotchain::ui {

// A picture a shot reads (its start image, its fallback image): the path as the document stores it,
// a "…" button that picks a file, and a 64-pixel thumbnail decoded on the thread pool. Emits `chosen`
// with the stored path (relative to the document's folder when inside it) when the user finishes typing
// or picks a file; setPath shows the document's value without emitting.
class ImageField : public QWidget {
  Q_OBJECT

 public:
  ImageField(const QString& dialogTitle, const QString& placeholder, QWidget* parent = nullptr);
  void setBaseFolder(const std::filesystem::path& folder) { baseFolder_ = folder; }
  void setPath(const QString& path);
  QLineEdit* edit() const { return edit_; }
  QLabel* thumbnail() const { return thumb_; }

 Q_SIGNALS:
  void chosen(const QString& storedPath);

 private:
  void showThumbnail(const QString& path);

  QString dialogTitle_;
  std::filesystem::path baseFolder_;
  QLineEdit* edit_;
  QLabel* thumb_;
};

}  // namespace shotchain::ui
