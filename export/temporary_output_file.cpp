#include "export/temporary_output_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "util/write_target.h"

namespace shotchain::exporting {
namespace {

[[noreturn]] void fail(const std::filesystem::path& target, const std::string& what, int error) {
  throw util::FileWriteError(target.string() + ": cannot save: " + what + ": " + std::strerror(error));
}

std::filesystem::path folderOf(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// mkstemp creates 0600; a new output gets the mode an ordinary file would (0666 less the umask,
// read from /proc because umask(2) can only read by setting), a replaced one keeps its mode.
mode_t modeForNewFile(const std::filesystem::path& target) {
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0) return existing.st_mode & 07777;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return 0666 & ~static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 0644;
}

}  // namespace

TemporaryOutputFile::TemporaryOutputFile(const std::filesystem::path& target)
    : target_(util::resolveWriteTarget(target)) {
  std::string name = (folderOf(target_) / ("." + target_.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(target_, "cannot create a temporary file in " + folderOf(target_).string(), errno);
  ::close(fd);
  temporary_ = name;
}

TemporaryOutputFile::~TemporaryOutputFile() {
  if (!committed_) ::unlink(temporary_.c_str());
}

void TemporaryOutputFile::commit() {
  const int fd = ::open(temporary_.c_str(), O_RDWR);
  if (fd < 0) fail(target_, "cannot reopen " + temporary_.string(), errno);
  if (::fchmod(fd, modeForNewFile(target_)) != 0 || ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail(target_, "flush to disk failed", error);
  }
  ::close(fd);
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) fail(target_, "rename over the target failed", errno);
  committed_ = true;
  const int dirFd = ::open(folderOf(target_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

}  // namespace shotchain::exporting
