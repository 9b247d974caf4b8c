#include "util/bounded_file.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/byte_size.h"

namespace shotchain::util {
namespace {

std::string kindProblem(const struct stat& info) { return notRegularFileReason(info.st_mode); }

std::string sizeProblem(const struct stat& info, std::uint64_t maxBytes) {
  if (info.st_size <= 0) return "is empty";
  if (static_cast<std::uint64_t>(info.st_size) > maxBytes)
    return "is " + formatByteSize(static_cast<std::uint64_t>(info.st_size)) + "; the limit is " +
           formatByteSize(maxBytes);
  return {};
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// "does not exist", or for a symbolic link whose target is missing, which link and where it points.
std::string missingProblem(const std::filesystem::path& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return "does not exist";
  std::string target(4096, '\0');
  const ssize_t length = ::readlink(path.c_str(), target.data(), target.size());
  target.resize(length > 0 ? static_cast<std::size_t>(length) : 0);
  return "is a symbolic link to \"" + target + "\", which does not exist";
}

}  // namespace

std::string notRegularFileReason(unsigned int mode) {
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a file";
  if (S_ISSOCK(mode)) return "is a socket, not a file";
  if (!S_ISREG(mode)) return "is not a regular file";
  return {};
}

std::string regularFileProblem(const std::filesystem::path& path, std::uint64_t maxBytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return errno == ENOENT || errno == ENOTDIR ? missingProblem(path)
                                               : std::string("cannot be read: ") + std::strerror(errno);
  if (std::string problem = kindProblem(info); !problem.empty()) return problem;
  if (std::string problem = sizeProblem(info, maxBytes); !problem.empty()) return problem;
  if (::access(path.c_str(), R_OK) != 0) return "cannot be read (permissions?)";
  return {};
}

std::string readRegularFile(const std::filesystem::path& path, std::uint64_t maxBytes, std::uint64_t limit) {
  auto fail = [&](const std::string& why) { return std::runtime_error(path.string() + ": " + why); };
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw fail(missingProblem(path));
    throw fail(std::string("cannot be read: ") + std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw fail(std::string("cannot be read: ") + std::strerror(errno));
  if (std::string problem = kindProblem(info); !problem.empty()) throw fail(problem);
  if (std::string problem = sizeProblem(info, maxBytes); !problem.empty()) throw fail(problem);
  const std::uint64_t wanted = std::min<std::uint64_t>(static_cast<std::uint64_t>(info.st_size), limit);
  std::string bytes(static_cast<std::size_t>(wanted), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw fail(std::string("cannot be read: ") + std::strerror(errno));
    if (got == 0) break;  // the file shrank while being read
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace shotchain::util
