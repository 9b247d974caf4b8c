#pragma once

#include <QLabel>

namespace shotchain::ui {

// A one-line hint that gives way: it asks for no width of its own and, where the full text does not fit,
// shows it cut with "…" (the whole text in its tooltip).
class ElidedLabel : public QLabel {
  Q_OBJECT

 public:
  explicit ElidedLabel(const QString& text, QWidget* parent = nullptr);
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
};

}  // namespace shotchain::ui
