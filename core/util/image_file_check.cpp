#include "util/image_file_check.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <optional>
#include <utility>

#include "util/bounded_file.h"

namespace shotchain::util {
namespace {

using Size = std::pair<std::uint32_t, std::uint32_t>;

std::uint32_t byteAt(const std::string& b, std::size_t at) { return static_cast<unsigned char>(b[at]); }
std::uint32_t bigEndian(const std::string& b, std::size_t at, int count) {
  std::uint32_t value = 0;
  for (int i = 0; i < count; ++i) value = (value << 8) | byteAt(b, at + static_cast<std::size_t>(i));
  return value;
}
std::uint32_t littleEndian(const std::string& b, std::size_t at, int count) {
  std::uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | byteAt(b, at + static_cast<std::size_t>(i));
  return value;
}

// The frame header (SOF0..SOF15 except DHT/JPG/DAC) names the size; markers before it are skipped.
std::optional<Size> jpegSize(const std::string& b) {
  std::size_t at = 2;
  while (at + 9 < b.size()) {
    if (byteAt(b, at) != 0xFF) return std::nullopt;
    const std::uint32_t marker = byteAt(b, at + 1);
    if (marker == 0xFF) {
      ++at;
      continue;
    }
    const std::uint32_t length = bigEndian(b, at + 2, 2);
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
      return Size{bigEndian(b, at + 7, 2), bigEndian(b, at + 5, 2)};
    if (length < 2) return std::nullopt;
    at += 2 + length;
  }
  return std::nullopt;
}

std::optional<Size> webpSize(const std::string& b) {
  if (b.size() < 30) return std::nullopt;
  const std::string chunk = b.substr(12, 4);
  if (chunk == "VP8X") return Size{littleEndian(b, 24, 3) + 1, littleEndian(b, 27, 3) + 1};
  if (chunk == "VP8 ") return Size{littleEndian(b, 26, 2) & 0x3FFF, littleEndian(b, 28, 2) & 0x3FFF};
  if (chunk == "VP8L" && byteAt(b, 20) == 0x2F) {
    const std::uint32_t bits = littleEndian(b, 21, 4);
    return Size{(bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1};
  }
  return std::nullopt;
}

// nullopt: not a format the readers take; a zero side: the header could not be read.
std::optional<Size> imageSize(const std::string& b, const char*& format) {
  if (b.size() >= 24 && b.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0) {
    format = "PNG";
    return b.compare(12, 4, "IHDR") == 0 ? Size{bigEndian(b, 16, 4), bigEndian(b, 20, 4)} : Size{0, 0};
  }
  if (b.size() >= 3 && b.compare(0, 3, "\xFF\xD8\xFF") == 0) {
    format = "JPEG";
    return jpegSize(b).value_or(Size{0, 0});
  }
  if (b.size() >= 16 && b.compare(0, 4, "RIFF") == 0 && b.compare(8, 4, "WEBP") == 0) {
    format = "WebP";
    return webpSize(b).value_or(Size{0, 0});
  }
  if (b.size() >= 26 && b.compare(0, 2, "BM") == 0) {
    format = "BMP";
    const auto height = static_cast<std::int32_t>(littleEndian(b, 22, 4));
    return Size{littleEndian(b, 18, 4),
                static_cast<std::uint32_t>(height < 0 ? -static_cast<std::int64_t>(height) : height)};
  }
  return std::nullopt;
}

// A PNG is whole when its chunks, walked by their lengths, reach IEND inside the file; a truncated one (a copy
// cut short, a download that stopped) ends before (only the chunk headers are read).
bool pngReachesEnd(const std::filesystem::path& path, std::uint64_t fileSize) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t at = 8;
  char header[8];
  while (at + 12 <= fileSize && in.seekg(static_cast<std::streamoff>(at)) && in.read(header, 8)) {
    const std::string h(header, 8);
    if (h.compare(4, 4, "IEND") == 0) return true;
    at += 12 + bigEndian(h, 0, 4);
  }
  return false;
}

// A JPEG is whole when its end-of-image marker (FF D9) is in its last bytes (some writers add padding after it).
bool jpegReachesEnd(const std::filesystem::path& path, std::uint64_t fileSize) {
  const std::uint64_t tail = std::min<std::uint64_t>(fileSize, 64 << 10);
  std::ifstream in(path, std::ios::binary);
  std::string bytes(tail, '\0');
  if (!in.seekg(static_cast<std::streamoff>(fileSize - tail)) ||
      !in.read(bytes.data(), static_cast<std::streamsize>(tail)))
    return false;
  return bytes.find("\xff\xd9") != std::string::npos;
}

}  // namespace

std::string imageFileProblem(const std::filesystem::path& path) {
  if (std::string problem = regularFileProblem(path, kMaxImageFileBytes); !problem.empty()) return problem;
  std::string head;
  try {
    head = readRegularFile(path, kMaxImageFileBytes, 64 << 10);
  } catch (const std::exception& error) {
    return error.what();
  }
  const char* format = "";
  const std::optional<Size> size = imageSize(head, format);
  if (!size) return "is not a PNG, JPEG, WebP or BMP image";
  const auto [width, height] = *size;
  if (width == 0 || height == 0)
    return "is a damaged " + std::string(format) + " image (no readable size in its header)";
  if (width > kMaxImageSide || height > kMaxImageSide)
    return "is a " + std::to_string(width) + "×" + std::to_string(height) + " " + format +
           "; each side may be at most " + std::to_string(kMaxImageSide) + " pixels";
  std::error_code error;
  const std::uint64_t fileSize = std::filesystem::file_size(path, error);
  const std::string kind = format;
  if (!error &&
      ((kind == "PNG" && !pngReachesEnd(path, fileSize)) || (kind == "JPEG" && !jpegReachesEnd(path, fileSize))))
    return "is a truncated " + kind + " image (the file ends before the image does)";
  return {};
}

}  // namespace shotchain::util
