#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace shotchain::util {

// Why a file of this st_mode is not a regular file ("is a directory, not a file", "is a FIFO (named
// pipe), not a file", "is a device, not a file", …), or empty for a regular file.
std::string notRegularFileReason(unsigned int mode);

// Why `path` is not a regular file of 1..maxBytes bytes that can be read ("does not exist",
// "is a directory, not a file", "is a device or FIFO, not a file", "is 3.2 GiB; the limit is
// 64 MiB", …), or empty when it is one. Follows symbolic links; never opens a device or FIFO.
std::string regularFileProblem(const std::filesystem::path& path, std::uint64_t maxBytes);

// At most `limit` bytes from the start of a regular file of at most maxBytes bytes. The file is
// opened non-blocking and checked with fstat before the first read, so a FIFO, device or directory
// is refused without blocking; throws std::runtime_error "<path>: <why>".
std::string readRegularFile(const std::filesystem::path& path, std::uint64_t maxBytes,
                            std::uint64_t limit = UINT64_MAX);

}  // namespace shotchain::util
