#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace shotchain::util {

class FileWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `bytes` to `path` so that `path` holds either its old content or all of the new
// content, never a part: a temporary file in the same folder, flushed to disk, then renamed
// over the target. On failure the temporary file is removed, the target is untouched, and
// FileWriteError names the file and the reason. A symbolic link is followed to the file it names;
// a target that is a folder, device, FIFO or socket is refused (util/write_target.h).
void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace shotchain::util
