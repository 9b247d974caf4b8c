#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace shotchain::util {

// What a render accepts as an image file (a shot's fallback image): a regular file of at most
// kMaxImageFileBytes, PNG, JPEG, WebP or BMP by its first bytes, at most kMaxImageSide pixels a side
// by its header. The studio's and the CLI's image reader apply the same limits.
inline constexpr std::uint64_t kMaxImageFileBytes = 64ull << 20;
inline constexpr int kMaxImageSide = 8192;
// What a decoder may allocate for one such image, in MiB: the largest at 8 bytes a pixel (16-bit RGBA), so that
// every image inside the side limit decodes (Qt's own default stops at 128 MiB, a 5792-pixel square).
inline constexpr int kMaxImageDecodeMiB = int((std::uint64_t{kMaxImageSide} * kMaxImageSide * 8) >> 20);

// Why `path` is not such an image ("is a directory, not a file", "is not a PNG, JPEG, WebP or BMP
// image", "is a truncated PNG image", …), or empty. Reads the first 64 KiB, a PNG's chunk headers and a JPEG's last
// 64 KiB, never from a device or FIFO.
std::string imageFileProblem(const std::filesystem::path& path);

}  // namespace shotchain::util
