#pragma once

#include <filesystem>

namespace shotchain::util {

// Where a write of `path` really lands: a symbolic link is followed (link by link, relative links
// against their own folder, at most 40) to the file it names, so saving through a link updates the
// real file and the link stays a link. Throws FileWriteError ("<path>: cannot save: ...") when that
// file exists and is not a regular file (a folder, device, FIFO or socket: never replaced), or the
// links loop.
std::filesystem::path resolveWriteTarget(const std::filesystem::path& path);

}  // namespace shotchain::util
