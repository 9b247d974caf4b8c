#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace shotchain::models {

// Throws "<file>: cannot load as <component>: problem; problem" when config detection found any.
inline void requireNoDetectionProblems(const std::string& fileLabel, const std::string& component,
                                       const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string message = fileLabel + ": cannot load as " + component + ":";
  for (const std::string& problem : problems) message += " " + problem + ";";
  message.pop_back();
  throw std::runtime_error(message);
}

}  // namespace shotchain::models
