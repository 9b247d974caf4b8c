#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shotchain::cli {

// The number an option was given, the whole text; otherwise std::invalid_argument naming the option
// and the text ("--samples: \"x\" is not a whole number").
int intOption(const std::string& option, const std::string& text);
std::int64_t int64Option(const std::string& option, const std::string& text);
double doubleOption(const std::string& option, const std::string& text);

// "a,b,,c" → {"a", "b", "", "c"}; "" → {""}.
std::vector<std::string> splitList(const std::string& text, char separator = ',');

}  // namespace shotchain::cli
