#pragma once

#include <QWidget>

namespace shotchain::ui {

class MemoryHistory;

// A custom-painted strip chart: reserved (outline) over allocated (filled), the peak, the device
// total when it is in range, and a marker at every cut.
class VramChart : public QWidget {
  Q_OBJECT

 public:
  explicit VramChart(const MemoryHistory* history, QWidget* parent = nullptr);

  void setHostMemory(bool host) { host_ = host; update(); }
  // Paints into any device (the widget, or a QImage in tests).
  void paintChart(QPainter& p, const QRect& area) const;

  QSize sizeHint() const override { return {320, 170}; }
  QSize minimumSizeHint() const override { return {160, 110}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  const MemoryHistory* history_;
  bool host_ = true;
};

}  // namespace shotchain::ui
