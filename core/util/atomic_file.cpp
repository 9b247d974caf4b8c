#include "util/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/write_target.h"

namespace shotchain::util {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int error) {
  throw FileWriteError(path.string() + ": cannot save: " + what + ": " + std::strerror(error));
}

// The process umask, read without changing it (umask(2) can only read by setting, which races
// with other threads creating files).
mode_t currentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 022;
}

mode_t modeForNewFile(const std::filesystem::path& path) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) return existing.st_mode & 07777;
  return 0666 & ~currentUmask();
}

}  // namespace

void writeFileAtomically(const std::filesystem::path& requested, std::string_view bytes) {
  const std::filesystem::path path = resolveWriteTarget(requested);
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string leaf = ".";
  leaf += path.filename().string();
  leaf += ".tmp-XXXXXX";
  std::string tempName = (folder / leaf).string();
  const int fd = ::mkstemp(tempName.data());
  if (fd < 0) fail(path, "cannot create a temporary file in " + folder.string(), errno);

  auto abandon = [&](const std::string& what, int error) {
    ::close(fd);
    ::unlink(tempName.c_str());
    fail(path, what, error);
  };

  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      abandon("write failed", errno);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  if (::fchmod(fd, modeForNewFile(path)) != 0) abandon("cannot set permissions", errno);
  if (::fsync(fd) != 0) abandon("flush to disk failed", errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tempName.c_str());
    fail(path, "close failed", error);
  }
  if (::rename(tempName.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tempName.c_str());
    fail(path, "rename over the target failed", error);
  }
  // Make the rename itself durable.
  const int dirFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

}  // namespace shotchain::util
