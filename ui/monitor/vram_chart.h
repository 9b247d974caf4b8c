#pragma once

#include <vector>

#include <QWidget>

namespace shotchain::ui {

class MemoryHistory;

struct LabelSpan {
  double left = 0;
  double width = 0;
};
// Row (0…rows−1) of each label, left to right, so that no two in a row overlap; −1 where no row is
// free. Row 0 starts at `firstRowFrom` (right of the legend).
std::vector<int> stackLabels(const std::vector<LabelSpan>& labels, int rows, double firstRowFrom);

// A custom-painted strip chart: reserved (outline) over allocated (filled), the peak, the device
// total when it is in range, and a marker at every cut.
class VramChart : public QWidget {
  Q_OBJECT

 public:
  explicit VramChart(const MemoryHistory* history, QWidget* parent = nullptr);

  void setHostMemory(bool host) {
    host_ = host;
    update();
  }
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
