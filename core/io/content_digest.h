#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace shotchain::io {

// What the file system says of a file's current contents without reading them. Any write moves the change
// time, which no program can set back, so an equal stamp means the bytes have not changed since.
struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t modifiedNs = 0;
  std::int64_t changedNs = 0;
  bool operator==(const FileStamp&) const = default;
};
// Follows symbolic links; nullopt when the file cannot be looked at.
std::optional<FileStamp> fileStamp(const std::filesystem::path& path);

// A digest of every byte of a file (XXH3, 128 bits, as 32 hex characters): what a render's shot keys and
// a LoRA's identity follow, so a file replaced or rewritten in place under the same name is a new file.
// Cached per path and stamp in this process and in the digest cache (digestCacheFile()), so a file is read
// again only after it changed. Throws std::runtime_error naming the file when it cannot be read, or when
// it changes while it is read.
std::string contentDigest(const std::filesystem::path& path);

// The same digest, read now and kept nowhere (a render's own frames and tails, checked when re-used).
std::string bytesDigest(const std::filesystem::path& path);

// The digest when this process or the digest cache already holds it for the file as it is now; never reads
// the file's bytes.
std::optional<std::string> knownContentDigest(const std::filesystem::path& path);

// file-digests.json in util::userCacheDirectory() (empty when there is none). A cache that cannot be read or
// written is left alone: digests are then worked out again.
std::filesystem::path digestCacheFile();

}  // namespace shotchain::io
