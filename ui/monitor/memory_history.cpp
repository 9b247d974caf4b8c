#include "monitor/memory_history.h"

#include <algorithm>

namespace shotchain::ui {

void MemoryHistory::add(const memory::MemorySample& sample) {
  samples_.push_back(sample);
  if (samples_.size() > capacity_) samples_.remove(0, samples_.size() - capacity_);
  peak_ = std::max({peak_, sample.peakAllocated, sample.allocated});
  const double oldest = samples_.front().seconds;
  markers_.erase(
      std::remove_if(markers_.begin(), markers_.end(), [oldest](const Marker& m) { return m.seconds < oldest; }),
      markers_.end());
}

void MemoryHistory::addMarker(double seconds, const QString& label) { markers_.push_back({seconds, label}); }

void MemoryHistory::clear() {
  samples_.clear();
  markers_.clear();
  peak_ = 0;
}

std::uint64_t MemoryHistory::scale() const {
  std::uint64_t top = 1;
  for (const memory::MemorySample& s : samples_) top = std::max({top, s.allocated, s.reserved, s.peakAllocated});
  // The device total only sets the scale when it is within reach, so host RAM (tens of GiB) does
  // not flatten a few hundred MiB of tensors into the floor.
  if (!samples_.isEmpty() && samples_.back().deviceTotal > 0 && samples_.back().deviceTotal < top * 4)
    top = std::max(top, samples_.back().deviceTotal);
  return top;
}

}  // namespace shotchain::ui
