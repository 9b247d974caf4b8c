#pragma once

#include <filesystem>

namespace shotchain::render {

// Held while a render writes into its output folder: a second render into the same folder (another
// process, or this one) is refused while the first runs. An advisory lock (flock) on
// <out>/.shotchain-render.lock, released when the holder ends in any way (also when killed), so a
// killed render can be resumed at once.
class RenderFolderLock {
 public:
  // Creates the folder when missing. Throws RenderError("output", …) naming the folder and the
  // process that holds it.
  explicit RenderFolderLock(const std::filesystem::path& outputDirectory);
  ~RenderFolderLock();
  RenderFolderLock(const RenderFolderLock&) = delete;
  RenderFolderLock& operator=(const RenderFolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace shotchain::render
