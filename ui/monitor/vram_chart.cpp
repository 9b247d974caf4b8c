#include "monitor/vram_chart.h"

#include <algorithm>

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include "monitor/memory_history.h"
#include "util/byte_size.h"

namespace shotchain::ui {

std::vector<int> stackLabels(const std::vector<LabelSpan>& labels, int rows, double firstRowFrom) {
  std::vector<double> freeFrom(static_cast<std::size_t>(std::max(rows, 0)), -1e300);
  if (!freeFrom.empty()) freeFrom[0] = firstRowFrom;
  std::vector<int> out;
  for (const LabelSpan& label : labels) {
    const auto row = std::find_if(freeFrom.begin(), freeFrom.end(), [&](double from) { return label.left >= from; });
    if (row == freeFrom.end()) {
      out.push_back(-1);
      continue;
    }
    *row = label.left + label.width + 4;
    out.push_back(static_cast<int>(row - freeFrom.begin()));
  }
  return out;
}

VramChart::VramChart(const MemoryHistory* history, QWidget* parent) : QWidget(parent), history_(history) {
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void VramChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paintChart(p, rect());
}

void VramChart::paintChart(QPainter& p, const QRect& area) const {
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(area, QColor(0x14, 0x15, 0x18));
  const QRect plot = area.adjusted(66, 8, -8, -18);
  p.setPen(QColor(0x30, 0x30, 0x34));
  for (int i = 0; i <= 4; ++i) {
    const int y = plot.bottom() - plot.height() * i / 4;
    p.drawLine(plot.left(), y, plot.right(), y);
  }
  if (history_->empty()) {
    p.setPen(QColor(0x80, 0x80, 0x80));
    p.drawText(plot, Qt::AlignCenter, tr("Waiting for the first memory sample…"));
    p.restore();
    return;
  }
  const auto& samples = history_->samples();
  const double scale = static_cast<double>(history_->scale()) * 1.08;
  const double t0 = samples.front().seconds;
  const double t1 = std::max(samples.back().seconds, t0 + 30.0);  // at least a 30 s window
  auto xOf = [&](double t) { return plot.left() + (t - t0) / (t1 - t0) * plot.width(); };
  auto yOf = [&](double bytes) { return plot.bottom() - bytes / scale * plot.height(); };

  // Axis labels.
  QFont small = p.font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  p.setFont(small);
  p.setPen(QColor(0x90, 0x90, 0x90));
  for (int i = 0; i <= 4; i += 2) {
    const double bytes = scale * i / 4;
    p.drawText(QRect(area.left(), static_cast<int>(yOf(bytes)) - 8, 62, 16), Qt::AlignRight | Qt::AlignVCenter,
               QString::fromStdString(util::formatByteSize(static_cast<std::uint64_t>(bytes))));
  }
  p.drawText(QRect(plot.left(), plot.bottom() + 2, plot.width(), 14), Qt::AlignRight,
             tr("last %1 s").arg(static_cast<int>(t1 - t0)));

  QPainterPath allocated, reserved;
  allocated.moveTo(xOf(samples.front().seconds), plot.bottom());
  for (const memory::MemorySample& s : samples) {
    allocated.lineTo(xOf(s.seconds), yOf(static_cast<double>(s.allocated)));
    if (reserved.isEmpty())
      reserved.moveTo(xOf(s.seconds), yOf(static_cast<double>(s.reserved)));
    else
      reserved.lineTo(xOf(s.seconds), yOf(static_cast<double>(s.reserved)));
  }
  allocated.lineTo(xOf(samples.back().seconds), plot.bottom());
  allocated.closeSubpath();
  p.fillPath(allocated, QColor(0x3d, 0x8e, 0xd8, 150));
  p.setPen(QPen(QColor(0x3d, 0x8e, 0xd8), 1.2));
  p.setBrush(Qt::NoBrush);
  p.drawPath(allocated);
  p.setPen(QPen(QColor(0xf0, 0xb0, 0x3c), 1.5));
  p.drawPath(reserved);

  const memory::MemorySample& last = samples.back();
  if (last.deviceTotal > 0 && last.deviceTotal <= scale) {
    p.setPen(QPen(QColor(0xe8, 0x4a, 0x4a), 1, Qt::DashLine));
    const double y = yOf(static_cast<double>(last.deviceTotal));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.drawText(QPointF(plot.left() + 4, y - 3), host_ ? tr("host total") : tr("device total"));
  }
  p.setPen(QPen(QColor(0xc0, 0xc0, 0xc0), 1, Qt::DotLine));
  const double peakY = yOf(static_cast<double>(history_->peakAllocated()));
  p.drawLine(QPointF(plot.left(), peakY), QPointF(plot.right(), peakY));
  p.drawText(QPointF(plot.right() - 60, peakY - 3), tr("peak"));

  const QFontMetricsF metrics(p.font());
  std::vector<LabelSpan> spans;
  std::vector<QString> labels;
  for (const auto& marker : history_->markers()) {
    spans.push_back({xOf(marker.seconds) + 2, metrics.horizontalAdvance(marker.label)});
    labels.push_back(marker.label);
  }
  const double legendRight = plot.left() + 70 + metrics.horizontalAdvance(tr("reserved")) + 4;
  const std::vector<int> rows = stackLabels(spans, 3, legendRight);
  p.setPen(QPen(QColor(0xff, 0xd0, 0x50), 1));
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const double x = spans[i].left - 2;
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    if (rows[i] < 0) continue;  // no free row: the line stays, the label is left out
    p.drawText(QPointF(spans[i].left, plot.top() + 10 + metrics.height() * rows[i]), labels[i]);
  }

  // Legend.
  p.setPen(QColor(0x3d, 0x8e, 0xd8));
  p.drawText(QPointF(plot.left() + 4, plot.top() + 12), tr("allocated"));
  p.setPen(QColor(0xf0, 0xb0, 0x3c));
  p.drawText(QPointF(plot.left() + 70, plot.top() + 12), tr("reserved"));
  p.restore();
}

}  // namespace shotchain::ui
