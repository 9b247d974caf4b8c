#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>

#include "io/pt_archive.h"
#include "io/safetensors_writer.h"

namespace shotchain::io {

class MappedFile;

// A PyTorch zip checkpoint (.pt, .pth), memory-mapped and fully checked on open (io/pt_archive.h):
// nothing in it is executed. Tensors come out as zero-copy views of the mapping when their storage
// is aligned for its dtype (torch.save aligns to 64 bytes), else as copies.
class PtCheckpoint {
 public:
  // Throws SafetensorsError naming the file.
  static std::shared_ptr<const PtCheckpoint> open(const std::filesystem::path& path);

  const std::string& label() const { return label_; }
  const PtArchive& archive() const { return archive_; }
  // choosePtStateDict's rule; `key` empty: the default one.
  const PtStateDict& stateDict(std::string_view key = {}) const { return choosePtStateDict(label_, archive_, key); }

  at::Tensor tensor(const PtTensorRecord& record) const;
  NamedTensors tensors(const PtStateDict& dict) const;

 private:
  PtCheckpoint() = default;
  std::string label_;
  std::shared_ptr<const MappedFile> mapping_;
  PtArchive archive_;
};

// .pt and .pth: read as PyTorch zip checkpoints.
bool isPtCheckpointPath(const std::filesystem::path& path);

}  // namespace shotchain::io
