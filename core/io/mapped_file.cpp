#include "io/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/safetensors_header.h"
#include "util/bounded_file.h"

namespace shotchain::io {

std::shared_ptr<const MappedFile> MappedFile::map(const std::filesystem::path& path) {
  const std::string label = path.filename().string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw SafetensorsError(label + ": cannot open: " + std::strerror(errno) + " (" + path.string() + ")");
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw SafetensorsError(label + ": cannot read its size: " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw SafetensorsError(label + ": " + util::notRegularFileReason(info.st_mode) + " (" + path.string() + ")");
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  void* address = nullptr;
  if (size > 0) {
    address = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (address == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw SafetensorsError(label + ": cannot map into memory: " + std::strerror(error));
    }
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<std::byte*>(address), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace shotchain::io
