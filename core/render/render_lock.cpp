#include "render/render_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "render/render_options.h"

namespace shotchain::render {

RenderFolderLock::RenderFolderLock(const std::filesystem::path& outputDirectory) {
  std::error_code error;
  std::filesystem::create_directories(outputDirectory, error);
  if (error)
    throw RenderError("output", outputDirectory.string() + ": cannot create the output folder: " + error.message());
  const std::filesystem::path path = outputDirectory / ".shotchain-render.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw RenderError("output", path.string() + ": cannot open the render lock: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int code = errno;
    char holder[32] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (code == EWOULDBLOCK)
      throw RenderError("output", outputDirectory.string() + ": another render is writing into this folder" +
                                      (n > 0 ? " (process " + std::string(holder, static_cast<std::size_t>(n)) + ")"
                                             : std::string()) +
                                      "; wait for it to end or choose another output folder");
    throw RenderError("output", path.string() + ": cannot lock: " + std::strerror(code));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

RenderFolderLock::~RenderFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace shotchain::render
