#pragma once

#include <filesystem>

namespace shotchain::exporting {

// For outputs written by a library that wants a path (libavformat): a temporary file beside
// `target` (".<name>.tmp-XXXXXX" in the same folder) that commit() flushes to disk and renames
// over the target. Destroyed without commit(), it removes the temporary file, so the target
// holds its old content or all of the new content, never a part. Errors throw FileWriteError
// naming the target.
class TemporaryOutputFile {
 public:
  explicit TemporaryOutputFile(const std::filesystem::path& target);  // target: util/write_target.h
  ~TemporaryOutputFile();
  TemporaryOutputFile(const TemporaryOutputFile&) = delete;
  TemporaryOutputFile& operator=(const TemporaryOutputFile&) = delete;

  const std::filesystem::path& path() const { return temporary_; }
  const std::filesystem::path& target() const { return target_; }
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  bool committed_ = false;
};

}  // namespace shotchain::exporting
