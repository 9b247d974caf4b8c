#include "cli/option_values.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace shotchain::cli {

namespace {

template <class Parse>
auto parseWhole(const std::string& option, const std::string& text, const char* what, Parse parse) {
  std::size_t used = 0;
  try {
    const auto value = parse(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(option + ": \"" + text + "\" is not " + what);
}

}  // namespace

std::int64_t int64Option(const std::string& option, const std::string& text) {
  return parseWhole(option, text, "a whole number", [](const std::string& t, std::size_t* used) {
    return static_cast<std::int64_t>(std::stoll(t, used));
  });
}

int intOption(const std::string& option, const std::string& text) {
  const std::int64_t value = int64Option(option, text);
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    throw std::invalid_argument(option + ": \"" + text + "\" is out of range");
  return static_cast<int>(value);
}

double doubleOption(const std::string& option, const std::string& text) {
  const double value =
      parseWhole(option, text, "a number", [](const std::string& t, std::size_t* used) { return std::stod(t, used); });
  if (!std::isfinite(value)) throw std::invalid_argument(option + ": \"" + text + "\" is not a finite number");
  return value;
}

std::vector<std::string> splitList(const std::string& text, char separator) {
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    items.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return items;
    start = end + 1;
  }
}

}  // namespace shotchain::cli
