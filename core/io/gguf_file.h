#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <ATen/core/Tensor.h>

#include "io/gguf_header.h"

namespace shotchain::io {

class MappedFile;

// One GGUF file (llama.cpp's container, as city96's and QuantStack's quantised Wan files use it), memory-mapped
// and fully checked on open (io/gguf_header.h). Quantised tensors are dequantised on request with tensor
// operations (io/ggml_dequant.h) or handed out as their blocks' bytes.
class GgufFile {
 public:
  // Throws SafetensorsError naming the file.
  static std::shared_ptr<const GgufFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::string& label() const { return label_; }
  const GgufHeader& header() const { return header_; }
  const GgufTensorInfo* find(std::string_view name) const;
  std::uint64_t fileSize() const;

  // The values, converted to `as`.
  at::Tensor tensor(const GgufTensorInfo& info, at::ScalarType as) const;
  // The stored blocks' bytes, copied out of the mapping: uint8 [rows, bytes per row] where rows are the shape's
  // outer dimensions (a 1-D tensor is one row).
  at::Tensor blocks(const GgufTensorInfo& info) const;

 private:
  GgufFile() = default;
  at::Tensor view(const GgufTensorInfo& info) const;
  std::filesystem::path path_;
  std::string label_;
  std::shared_ptr<const MappedFile> mapping_;
  GgufHeader header_;
  std::unordered_map<std::string, std::size_t> index_;
};

bool isGgufPath(const std::filesystem::path& path);

}  // namespace shotchain::io
