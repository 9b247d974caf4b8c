#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace shotchain::util {

// The middle value, or the mean of the two middle ones; NaNs are left out; nullopt when nothing is
// left. Of two middles of which one is infinite, the infinite one wins (the mean would hide it).
inline std::optional<double> median(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  const double lo = values[n / 2 - 1], hi = values[n / 2];
  if (std::isinf(lo) || std::isinf(hi)) return lo == hi ? lo : (std::isinf(hi) ? hi : lo);
  return 0.5 * (lo + hi);
}

// median(), or `none` when there is nothing to take it of.
inline double medianOr(std::vector<double> values, double none) { return median(std::move(values)).value_or(none); }

}  // namespace shotchain::util
