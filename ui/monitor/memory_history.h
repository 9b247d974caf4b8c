#pragma once

#include <QString>
#include <QVector>

#include "memory/memory_sample.h"

namespace shotchain::ui {

// The last few minutes of memory samples and the cuts that happened in them, for the chart.
class MemoryHistory {
 public:
  struct Marker {
    double seconds = 0;
    QString label;
  };

  explicit MemoryHistory(int capacity = 1200) : capacity_(capacity) {}

  void add(const memory::MemorySample& sample);
  void addMarker(double seconds, const QString& label);
  void clear();

  const QVector<memory::MemorySample>& samples() const { return samples_; }
  const QVector<Marker>& markers() const { return markers_; }
  bool empty() const { return samples_.isEmpty(); }
  const memory::MemorySample& latest() const { return samples_.back(); }
  std::uint64_t peakAllocated() const { return peak_; }
  // The largest of total, reserved and allocated over the window: the chart's full scale.
  std::uint64_t scale() const;

 private:
  int capacity_;
  QVector<memory::MemorySample> samples_;
  QVector<Marker> markers_;
  std::uint64_t peak_ = 0;
};

}  // namespace shotchain::ui
