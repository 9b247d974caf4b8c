#pragma once

#include <string>

namespace shotchain::util {

// A number as a message quotes it: the shortest text that reads back as the same double ("0.5", "10.0000001",
// "1e+308"), so a value just past a limit never prints as the limit; "nan", "inf" and "-inf" as such.
std::string numberText(double value);

}  // namespace shotchain::util
