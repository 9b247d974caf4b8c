#include "util/cache_directory.h"

#include <cstdlib>

namespace shotchain::util {

std::filesystem::path userCacheDirectory() {
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? std::filesystem::path(value) : std::filesystem::path();
  };
  if (std::filesystem::path own = variable("SHOTCHAIN_CACHE_DIR"); !own.empty()) return own;
  if (std::filesystem::path xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) return xdg / "shotchain";
  if (std::filesystem::path home = variable("HOME"); !home.empty()) return home / ".cache" / "shotchain";
  return {};
}

}  // namespace shotchain::util
