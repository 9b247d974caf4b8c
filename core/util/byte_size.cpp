#include "util/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace shotchain::util {

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

  long double unitBytes = 1;
  if (unit.empty() || unit == "B")
    unitBytes = 1;
  else if (unit == "KB")
    unitBytes = 1e3L;
  else if (unit == "MB")
    unitBytes = 1e6L;
  else if (unit == "GB")
    unitBytes = 1e9L;
  else if (unit == "TB")
    unitBytes = 1e12L;
  else if (unit == "K" || unit == "KIB")
    unitBytes = 0x1p10L;
  else if (unit == "M" || unit == "MIB")
    unitBytes = 0x1p20L;
  else if (unit == "G" || unit == "GIB")
    unitBytes = 0x1p30L;
  else if (unit == "T" || unit == "TIB")
    unitBytes = 0x1p40L;
  else
    return std::nullopt;

  const long double value = std::strtold(number.c_str(), nullptr) * unitBytes;
  if (!std::isfinite(value) || value >= 18446744073709551616.0L) return std::nullopt;  // 2^64
  const long double whole = std::roundl(value);
  if (std::fabs(value - whole) > 1e-3L) return std::nullopt;  // a fraction of a byte is not a size
  return static_cast<std::uint64_t>(whole);
}

namespace {

struct Unit {
  const char* name;
  std::uint64_t bytes;
};

// Largest first; at equal size the binary unit first (memory sizes are binary more often).
constexpr Unit kUnits[] = {{"TiB", 1ull << 40}, {"TB", 1000000000000ull}, {"GiB", 1ull << 30}, {"GB", 1000000000ull},
                           {"MiB", 1ull << 20}, {"MB", 1000000ull},       {"KiB", 1ull << 10}, {"kB", 1000ull}};

}  // namespace

std::string formatByteSizeExact(std::uint64_t bytes) {
  // The unit that writes the value in the fewest digits (whole, or up to two exact decimals);
  // the plain byte count when no unit is exact.
  std::string bestNumber = std::to_string(bytes);
  const char* bestUnit = nullptr;
  for (const Unit& unit : kUnits) {
    if (bytes < unit.bytes) continue;
    for (int decimals = 0; decimals <= 2; ++decimals) {
      char number[48];
      std::snprintf(number, sizeof number, "%.*Lf", decimals,
                    static_cast<long double>(bytes) / static_cast<long double>(unit.bytes));
      if (parseByteSize(std::string(number) + unit.name) != bytes) continue;
      if (std::string(number).size() < bestNumber.size() ||
          (!bestUnit && std::string(number).size() == bestNumber.size())) {
        bestNumber = number;
        bestUnit = unit.name;
      }
      break;
    }
  }
  return bestUnit ? bestNumber + " " + bestUnit : bestNumber;
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
  if (unit == 0 || value == std::floor(value))
    std::snprintf(buffer, sizeof buffer, "%.0f %s", value, units[unit]);
  else
    std::snprintf(buffer, sizeof buffer, "%.2f %s", value, units[unit]);
  return buffer;
}

}  // namespace shotchain::util
