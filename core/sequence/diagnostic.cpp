#include "sequence/diagnostic.h"

#include <algorithm>

namespace shotchain {

std::string Diagnostic::format(const std::string& file) const {
  std::string text;
  if (!file.empty()) text += file + ": ";
  if (!path.empty()) text += path + ": ";
  if (severity == Severity::Warning) text += "warning: ";
  return text + message;
}

bool hasErrors(const Diagnostics& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.isError(); });
}

std::string formatAll(const Diagnostics& diagnostics, const std::string& file) {
  std::string text;
  for (const auto& d : diagnostics) text += d.format(file) + "\n";
  return text;
}

}  // namespace shotchain
