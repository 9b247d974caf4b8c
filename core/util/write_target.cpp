#include "util/write_target.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "util/bounded_file.h"

namespace shotchain::util {
namespace {

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& why) {
  throw FileWriteError(path.string() + ": cannot save: " + why);
}

std::string notAFile(const std::filesystem::path& target, const struct stat& info) {
  return target.string() + " " + notRegularFileReason(info.st_mode) + "; nothing was written (choose a file name)";
}

}  // namespace

std::filesystem::path resolveWriteTarget(const std::filesystem::path& path) {
  std::filesystem::path target = path;
  for (int hop = 0;; ++hop) {
    struct stat info {};
    if (::lstat(target.c_str(), &info) != 0) {
      if (errno == ENOENT) return target;
      refuse(path, std::string("cannot examine ") + target.string() + ": " + std::strerror(errno));
    }
    if (S_ISREG(info.st_mode)) return target;
    if (!S_ISLNK(info.st_mode)) refuse(path, notAFile(target, info));
    if (hop == 40) refuse(path, "its symbolic links loop or go more than 40 deep");
    std::string link(4096, '\0');
    const ssize_t n = ::readlink(target.c_str(), link.data(), link.size());
    if (n < 0 || static_cast<std::size_t>(n) >= link.size())
      refuse(path, std::string("cannot read the symbolic link ") + target.string());
    link.resize(static_cast<std::size_t>(n));
    const std::filesystem::path next(link);
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
}

}  // namespace shotchain::util
