#include "io/pt_zip.h"

#include <algorithm>

#include "io/safetensors_header.h"

namespace shotchain::io {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint64_t kMaxEntries = 1'000'000;
constexpr std::size_t kMaxComment = 0xFFFF;

class Reader {
 public:
  Reader(std::string_view label, std::span<const std::byte> file) : label_(label), file_(file) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw SafetensorsError(std::string(label_) + ": zip: " + what);
  }

  void need(std::uint64_t at, std::uint64_t count, const char* what) const {
    if (at > file_.size() || count > file_.size() - at) fail(std::string(what) + " lies outside the file");
  }
  std::uint64_t le(std::uint64_t at, int bytes) const {
    std::uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | static_cast<std::uint8_t>(file_[at + i]);
    return value;
  }
  std::span<const std::byte> file() const { return file_; }

 private:
  std::string_view label_;
  std::span<const std::byte> file_;
};

struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

Directory findDirectory(const Reader& in) {
  const std::uint64_t size = in.file().size();
  if (size < 22) in.fail("too short for an end-of-directory record");
  const std::uint64_t lowest = size - 22 > kMaxComment ? size - 22 - kMaxComment : 0;
  for (std::uint64_t at = size - 22;; --at) {
    if (in.le(at, 4) == kEndOfDirectory) {
      Directory dir{in.le(at + 10, 2), in.le(at + 16, 4), in.le(at + 12, 4)};
      const bool zip64 = dir.entries == 0xFFFF || dir.offset == 0xFFFFFFFF || dir.size == 0xFFFFFFFF;
      if (at >= 20 && in.le(at - 20, 4) == kZip64Locator) {
        const std::uint64_t record = in.le(at - 20 + 8, 8);
        in.need(record, 56, "the ZIP64 end-of-directory record");
        if (in.le(record, 4) != kZip64EndOfDirectory) in.fail("the ZIP64 locator points at no ZIP64 record");
        dir = {in.le(record + 32, 8), in.le(record + 48, 8), in.le(record + 40, 8)};
      } else if (zip64) {
        in.fail("ZIP64 sizes without a ZIP64 end-of-directory record");
      }
      in.need(dir.offset, dir.size, "the central directory");
      if (dir.entries > kMaxEntries || dir.entries > dir.size / 46)
        in.fail("implausible entry count " + std::to_string(dir.entries));
      return dir;
    }
    if (at == lowest) break;
  }
  in.fail("no end-of-directory record (not a zip archive, or truncated)");
}

// ZIP64 extra field (id 1): 8-byte values in this order, each present only when its 32-bit field is 0xFFFFFFFF.
void readZip64Extra(const Reader& in, std::uint64_t at, std::uint64_t length, std::uint64_t& uncompressed,
                    std::uint64_t& compressed, std::uint64_t& local, const std::string& name) {
  const std::uint64_t end = at + length;
  while (at + 4 <= end) {
    const std::uint64_t id = in.le(at, 2), size = in.le(at + 2, 2);
    at += 4;
    if (size > end - at) in.fail("entry \"" + name + "\": extra field runs past its end");
    if (id == 1) {
      std::uint64_t field = at;
      for (std::uint64_t* value : {&uncompressed, &compressed, &local}) {
        if (*value != 0xFFFFFFFF) continue;
        if (field + 8 > at + size) in.fail("entry \"" + name + "\": ZIP64 extra field too short");
        *value = in.le(field, 8);
        field += 8;
      }
    }
    at += size;
  }
}

}  // namespace

std::map<std::string, ZipEntry, std::less<>> readZipDirectory(std::string_view label, std::span<const std::byte> file) {
  const Reader in(label, file);
  const Directory dir = findDirectory(in);
  std::map<std::string, ZipEntry, std::less<>> entries;
  std::uint64_t at = dir.offset;
  const std::uint64_t end = dir.offset + dir.size;
  for (std::uint64_t i = 0; i < dir.entries; ++i) {
    if (at + 46 > end || in.le(at, 4) != kDirectoryEntry)
      in.fail("central directory entry " + std::to_string(i) + " is malformed");
    const std::uint64_t flags = in.le(at + 8, 2), method = in.le(at + 10, 2);
    std::uint64_t compressed = in.le(at + 20, 4), uncompressed = in.le(at + 24, 4), local = in.le(at + 42, 4);
    const std::uint64_t nameLength = in.le(at + 28, 2), extraLength = in.le(at + 30, 2),
                        commentLength = in.le(at + 32, 2);
    if (at + 46 + nameLength + extraLength + commentLength > end)
      in.fail("central directory entry " + std::to_string(i) + " runs past the directory");
    const auto* chars = reinterpret_cast<const char*>(file.data() + at + 46);
    std::string name(chars, nameLength);
    readZip64Extra(in, at + 46 + nameLength, extraLength, uncompressed, compressed, local, name);
    if ((flags & 1) != 0) in.fail("entry \"" + name + "\" is encrypted");
    if (method != 0)
      in.fail("entry \"" + name + "\" is compressed (method " + std::to_string(method) +
              "); torch.save stores entries uncompressed: re-save the checkpoint with torch.save");
    if (compressed != uncompressed) in.fail("entry \"" + name + "\": stored sizes differ");
    in.need(local, 30, ("the local header of \"" + name + "\"").c_str());
    if (in.le(local, 4) != kLocalHeader) in.fail("entry \"" + name + "\": no local header at its offset");
    const std::uint64_t dataAt = local + 30 + in.le(local + 26, 2) + in.le(local + 28, 2);
    in.need(dataAt, uncompressed, ("the data of \"" + name + "\"").c_str());
    if (!entries.emplace(std::move(name), ZipEntry{dataAt, uncompressed}).second)
      in.fail("entry \"" + std::string(chars, nameLength) + "\" appears twice");
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

}  // namespace shotchain::io
