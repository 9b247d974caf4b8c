#pragma once

#include <cstdint>
#include <string>

namespace shotchain::cli {

// The number an option was given, the whole text; otherwise std::invalid_argument naming the option
// and the text ("--samples: \"x\" is not a whole number").
int intOption(const std::string& option, const std::string& text);
std::int64_t int64Option(const std::string& option, const std::string& text);
double doubleOption(const std::string& option, const std::string& text);

}  // namespace shotchain::cli
