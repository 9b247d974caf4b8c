#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace shotchain::continuity {

// Median of the values (nullopt when there are none); of two infinite middles the finite one wins.
inline std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  const double lo = values[n / 2 - 1], hi = values[n / 2];
  if (std::isinf(lo) || std::isinf(hi)) return lo == hi ? lo : (std::isinf(hi) ? hi : lo);
  return 0.5 * (lo + hi);
}

}  // namespace shotchain::continuity
