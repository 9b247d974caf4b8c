#include "preview/frame_view.h"

#include <QPainter>

namespace shotchain::ui {

FrameView::FrameView(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(240, 160);
}

void FrameView::setFrame(const QImage& image, const QString& caption) {
  image_ = image;
  caption_ = caption;
  message_.clear();
  update();
}

void FrameView::setMessage(const QString& message) {
  image_ = {};
  message_ = message;
  caption_.clear();
  update();
}

void FrameView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::black);
  if (!image_.isNull()) {
    const QSize fitted = image_.size().scaled(size(), Qt::KeepAspectRatio);
    const QRect target(QPoint((width() - fitted.width()) / 2, (height() - fitted.height()) / 2), fitted);
    // Small frames (latent previews, the demo model) are enlarged without blurring.
    p.setRenderHint(QPainter::SmoothPixmapTransform, fitted.width() < 4 * image_.width());
    p.drawImage(target, image_);
  } else {
    p.setPen(QColor(0x80, 0x80, 0x80));
    p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, message_);
  }
  if (!caption_.isEmpty()) {
    const QRect box =
        p.fontMetrics().boundingRect(caption_).adjusted(-6, -3, 6, 3).translated(12, 12 + p.fontMetrics().ascent());
    p.fillRect(box, QColor(0, 0, 0, 170));
    p.setPen(QColor(0xe0, 0xe0, 0xe0));
    p.drawText(box, Qt::AlignCenter, caption_);
  }
}

}  // namespace shotchain::ui
