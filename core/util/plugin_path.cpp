#include "util/plugin_path.h"

#include <cstdlib>
#include <vector>

namespace shotchain::util {

std::filesystem::path findPlugin(const std::string& fileName, std::string& looked) {
  std::vector<std::filesystem::path> candidates;
  if (const char* dir = std::getenv("SHOTCHAIN_PLUGIN_DIR"))
    candidates.emplace_back(std::filesystem::path(dir) / fileName);
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(exe.parent_path() / fileName);
    candidates.push_back(exe.parent_path() / ".." / "lib" / "shotchain" / fileName);
  }
  candidates.emplace_back(std::filesystem::path(SHOTCHAIN_PLUGIN_BUILD_DIR) / fileName);
  looked.clear();
  for (const auto& candidate : candidates) {
    if (std::filesystem::exists(candidate, error)) return candidate;
    looked += "\n  " + candidate.string();
  }
  return {};
}

}  // namespace shotchain::util
