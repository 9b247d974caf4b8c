#include "util/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace shotchain {

std::optional<std::uint64_t> parseByteSize(const std::string& text) {
  std::size_t pos = 0;
  auto skipSpaces = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  skipSpaces();
  const std::size_t numberStart = pos;
  bool seenDot = false;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || (text[pos] == '.' && !seenDot))) {
    seenDot = seenDot || text[pos] == '.';
    ++pos;
  }
  if (pos == numberStart) return std::nullopt;
  const std::string number = text.substr(numberStart, pos - numberStart);
  skipSpaces();
  std::string unit;
  while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos])))
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[pos++])));
  skipSpaces();
  if (pos != text.size()) return std::nullopt;

  int power = 0;
  if (unit.empty() || unit == "B") power = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB") power = 1;
  else if (unit == "M" || unit == "MB" || unit == "MIB") power = 2;
  else if (unit == "G" || unit == "GB" || unit == "GIB") power = 3;
  else if (unit == "T" || unit == "TB" || unit == "TIB") power = 4;
  else return std::nullopt;

  const long double value = std::strtold(number.c_str(), nullptr) * std::pow(1024.0L, power);
  if (!std::isfinite(value) || value >= 18446744073709551616.0L) return std::nullopt;  // 2^64
  if (power == 0 && seenDot) return std::nullopt;  // a fraction of a byte is not a size
  return static_cast<std::uint64_t>(value);
}

std::string formatByteSizeExact(std::uint64_t bytes) {
  static const char* const units[] = {"TiB", "GiB", "MiB", "KiB"};
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t unit = 1ull << (10 * (4 - i));
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + " " + units[i];
  }
  return std::to_string(bytes);
}

std::string formatByteSize(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  if (unit == 0 || value == std::floor(value)) std::snprintf(buffer, sizeof buffer, "%.0f %s", value, units[unit]);
  else std::snprintf(buffer, sizeof buffer, "%.2f %s", value, units[unit]);
  return buffer;
}

}  // namespace shotchain
