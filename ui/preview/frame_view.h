#pragma once

#include <QImage>
#include <QString>
#include <QWidget>

namespace shotchain::ui {

// Paints one frame, letterboxed on black, with a caption; holds only the latest image it was given.
class FrameView : public QWidget {
  Q_OBJECT

 public:
  explicit FrameView(QWidget* parent = nullptr);

  void setFrame(const QImage& image, const QString& caption);
  void setMessage(const QString& message);
  const QImage& frame() const { return image_; }
  QString caption() const { return caption_; }

  QSize sizeHint() const override { return {640, 400}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QImage image_;
  QString caption_;
  QString message_;
};

}  // namespace shotchain::ui
