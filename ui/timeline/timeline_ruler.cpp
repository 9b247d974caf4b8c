#include <QPainter>
#include <QPolygonF>

#include <algorithm>

#include "document/sequence_document.h"
#include "timeline/timeline_view.h"

// The ruler above the track: seconds, frame ticks when zoomed in, and the I/O loop range.
namespace shotchain::ui {

void TimelineView::paintRuler(QPainter& p) {
  const double fps = document_->sequence().settings.fps > 0 ? document_->sequence().settings.fps : 16;
  p.fillRect(QRect(0, 0, width(), kRulerHeight), QColor(0x24, 0x24, 0x27));
  p.setPen(QColor(0x80, 0x80, 0x80));
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  p.setFont(small);
  // Label every second, or every N seconds when a second is narrower than 60 px.
  const double pxPerSecond = fps * pixelsPerFrame_;
  int every = 1;
  while (pxPerSecond * every < 60) every *= 2;
  const int total = document_->sequence().totalFrames();
  for (int s = 0; s * fps <= total + fps * every; s += every) {
    const double x = xOfFrame(s * fps);
    if (x < -50 || x > width() + 50) continue;
    p.drawLine(QPointF(x, kRulerHeight - 8), QPointF(x, kRulerHeight));
    p.drawText(QPointF(x + 3, kRulerHeight - 9), QStringLiteral("%1s").arg(s));
  }
  if (pixelsPerFrame_ >= 4) {
    p.setPen(QColor(0x50, 0x50, 0x50));
    for (int f = 0; f <= total; ++f) {
      const double x = xOfFrame(f);
      if (x >= 0 && x <= width()) p.drawLine(QPointF(x, kRulerHeight - 3), QPointF(x, kRulerHeight));
    }
  }
  p.setFont(font());
  paintLoopRange(p);
}

// The I/O loop range: a band on the ruler from the in frame to the end of the out frame, with a bracket at
// each end (an open end reaches the sequence's start or end).
void TimelineView::paintLoopRange(QPainter& p) {
  if (loopIn_ < 0 && loopOut_ < 0) return;
  const int total = document_->sequence().totalFrames();
  const double left = xOfFrame(std::max(0, loopIn_));
  const double right = xOfFrame(loopOut_ >= 0 ? loopOut_ + 1 : total);
  const QColor colour(0x5c, 0xb0, 0xff);
  p.fillRect(QRectF(left, 2, right - left, kRulerHeight - 4), QColor(0x5c, 0xb0, 0xff, 60));
  p.setPen(QPen(colour, 2));
  if (loopIn_ >= 0)
    p.drawPolyline(QPolygonF({QPointF(left + 4, 2), QPointF(left, 2), QPointF(left, kRulerHeight - 2),
                              QPointF(left + 4, kRulerHeight - 2)}));
  if (loopOut_ >= 0)
    p.drawPolyline(QPolygonF({QPointF(right - 4, 2), QPointF(right, 2), QPointF(right, kRulerHeight - 2),
                              QPointF(right - 4, kRulerHeight - 2)}));
}

void TimelineView::setLoopRange(int in, int out) {
  loopIn_ = in;
  loopOut_ = out;
  update();
}

}  // namespace shotchain::ui
