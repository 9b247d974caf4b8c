#include "io/content_digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "io/strict_json.h"
#include "util/atomic_file.h"
#include "util/bounded_file.h"
#include "util/cache_directory.h"

namespace shotchain::io {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
constexpr const char* kCacheFormat = "shotchain.file-digests/1";
constexpr std::size_t kCacheEntries = 4096;             // the newest are kept
constexpr std::uint64_t kCacheFileBytes = 16ull << 20;  // larger: not ours, left alone

struct Entry {
  FileStamp stamp;
  std::string digest;
};

FileStamp stampOf(const struct stat& st) {
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
          static_cast<std::uint64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
          static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

std::string hexOf(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::optional<std::string> bytesOfHex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const auto value = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    const int high = value(hex[i]), low = value(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

std::string keyOf(const fs::path& path) { return fs::absolute(path).lexically_normal().string(); }

// The cache file's entries, path → entry, in the order written (oldest first); empty when it is missing or
// not one of ours.
std::vector<std::pair<std::string, Entry>> readCache(const fs::path& file) {
  std::vector<std::pair<std::string, Entry>> entries;
  if (file.empty() || !util::regularFileProblem(file, kCacheFileBytes).empty()) return entries;
  try {
    const Json json = parseJsonChecked<Json>(util::readRegularFile(file, kCacheFileBytes), 8);
    if (json.value("format", std::string()) != kCacheFormat) return {};
    for (const Json& row : json.at("files")) {
      const std::optional<std::string> path = bytesOfHex(row.at("path_hex").get<std::string>());
      if (!path) continue;
      Entry entry{{row.at("device").get<std::uint64_t>(), row.at("inode").get<std::uint64_t>(),
                   row.at("size").get<std::uint64_t>(), row.at("modified_ns").get<std::int64_t>(),
                   row.at("changed_ns").get<std::int64_t>()},
                  row.at("digest").get<std::string>()};
      entries.emplace_back(*path, std::move(entry));
    }
  } catch (const std::exception&) {
    return {};
  }
  return entries;
}

void addToCache(const fs::path& file, const std::string& path, const Entry& entry) {
  if (file.empty()) return;
  std::vector<std::pair<std::string, Entry>> entries = readCache(file);  // another process may have added some
  std::erase_if(entries, [&path](const auto& row) { return row.first == path; });
  entries.emplace_back(path, entry);
  if (entries.size() > kCacheEntries)
    entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(entries.size() - kCacheEntries));
  Json json;
  json["format"] = kCacheFormat;
  Json& rows = json["files"] = Json::array();
  for (const auto& [name, row] : entries)
    rows.push_back({{"path_hex", hexOf(name)},
                    {"device", row.stamp.device},
                    {"inode", row.stamp.inode},
                    {"size", row.stamp.size},
                    {"modified_ns", row.stamp.modifiedNs},
                    {"changed_ns", row.stamp.changedNs},
                    {"digest", row.digest}});
  try {
    std::error_code error;
    fs::create_directories(file.parent_path(), error);
    util::writeFileAtomically(file, json.dump(1) + "\n");
  } catch (const std::exception&) {
    // A cache that cannot be written costs a read of the file next time, nothing more.
  }
}

std::mutex mutex;
std::map<std::string, Entry> known;   // this process's digests, by absolute path
std::map<std::string, Entry> cached;  // the cache file's, read once
bool cacheRead = false;

std::optional<std::string> lookUp(const std::string& path, const FileStamp& stamp) {
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(path); it != known.end() && it->second.stamp == stamp) return it->second.digest;
  if (!cacheRead) {
    for (auto& [name, entry] : readCache(digestCacheFile())) cached[name] = std::move(entry);
    cacheRead = true;
  }
  if (const auto it = cached.find(path); it != cached.end() && it->second.stamp == stamp) {
    known[path] = it->second;
    return it->second.digest;
  }
  return std::nullopt;
}

struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::string hashFile(const fs::path& path, FileStamp& stamp) {
  const std::string problem = util::regularFileProblem(path, UINT64_MAX);
  if (!problem.empty()) throw std::runtime_error(path.string() + ": " + problem);
  Descriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat before {};
  if (file.fd < 0 || ::fstat(file.fd, &before) != 0)
    throw std::runtime_error(path.string() + ": cannot be read (" + std::strerror(errno) + ")");
  ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  XXH3_state_t* state = XXH3_createState();
  if (!state) throw std::bad_alloc();
  XXH3_128bits_reset(state);
  // A frame's few hundred KiB take one read; a model file 8 MiB at a time.
  std::vector<char> buffer(std::clamp<std::uint64_t>(static_cast<std::uint64_t>(before.st_size), 1, 8u << 20));
  std::uint64_t offset = 0;
  for (;;) {
    const ssize_t got = ::pread(file.fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      XXH3_freeState(state);
      throw std::runtime_error(path.string() + ": cannot be read (" + std::strerror(errno) + ")");
    }
    if (got == 0) break;
    XXH3_128bits_update(state, buffer.data(), static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
  }
  const XXH128_hash_t hash = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  struct stat after {};
  stamp = stampOf(before);
  if (::fstat(file.fd, &after) != 0 || !(stampOf(after) == stamp) || offset != stamp.size)
    throw std::runtime_error(path.string() + ": changed while it was read; try again once it is written");
  std::array<char, 33> text{};
  std::snprintf(text.data(), text.size(), "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return text.data();
}

}  // namespace

std::optional<FileStamp> fileStamp(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return stampOf(st);
}

std::optional<std::string> knownContentDigest(const fs::path& path) {
  const std::optional<FileStamp> stamp = fileStamp(path);
  if (!stamp) return std::nullopt;
  return lookUp(keyOf(path), *stamp);
}

std::string contentDigest(const fs::path& path) {
  const std::string key = keyOf(path);
  if (const std::optional<FileStamp> stamp = fileStamp(path))
    if (std::optional<std::string> digest = lookUp(key, *stamp)) return *digest;
  Entry entry;
  entry.digest = hashFile(path, entry.stamp);
  const std::lock_guard<std::mutex> lock(mutex);
  known[key] = entry;
  cached[key] = entry;
  addToCache(digestCacheFile(), key, entry);
  return entry.digest;
}

std::string bytesDigest(const fs::path& path) {
  FileStamp stamp;
  return hashFile(path, stamp);
}

fs::path digestCacheFile() {
  const fs::path folder = util::userCacheDirectory();
  return folder.empty() ? fs::path() : folder / "file-digests.json";
}

}  // namespace shotchain::io
