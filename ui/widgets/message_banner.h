#pragma once

#include <QFrame>
#include <QList>

class QAction;
class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QToolButton;

namespace shotchain::ui {

// A non-modal strip above the preview: an error with its details, a warning, or a finished
// render with buttons (open the folder, play the MP4). Closing it hides it.
class MessageBanner : public QFrame {
  Q_OBJECT

 public:
  enum class Kind { Info, Warning, Error };

  explicit MessageBanner(QWidget* parent = nullptr);

  void showMessage(Kind kind, const QString& text, const QString& details = {}, const QList<QAction*>& actions = {});
  Kind kind() const { return kind_; }
  QString text() const;
  QString details() const;

 private:
  Kind kind_ = Kind::Info;
  QLabel* text_;
  QToolButton* detailsButton_;
  QPlainTextEdit* details_;
  QHBoxLayout* buttons_;
  QList<QWidget*> actionButtons_;
};

}  // namespace shotchain::ui
