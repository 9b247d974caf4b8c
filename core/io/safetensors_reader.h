#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <ATen/core/Tensor.h>

#include "io/safetensors_header.h"

namespace shotchain::io {

class MappedFile;

// One safetensors file, memory-mapped and fully validated on open (no tensor data is touched
// before the header passes every check). Tensors come out as zero-copy views of the mapping where
// the dtype exists in libtorch and the data is aligned; otherwise as copies.
class SafetensorsFile {
 public:
  // Throws SafetensorsError naming the file. Refuses pickle files (.pth/.pt/.ckpt/.bin; WeightSet reads .pt/.pth).
  static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::string& label() const { return label_; }
  const SafetensorsHeader& header() const { return header_; }
  const TensorEntry* find(std::string_view name) const;

  // The stored tensor. F8_E4M3/F8_E5M2 are decoded in software to `as` (default float32);
  // other dtypes are converted to `as` when given. Throws for unknown names and for dtypes that
  // cannot become a tensor (e.g. F4), naming the file and the tensor.
  at::Tensor tensor(std::string_view name, std::optional<at::ScalarType> as = std::nullopt) const;
  at::Tensor tensor(const TensorEntry& entry, std::optional<at::ScalarType> as = std::nullopt) const;
  // The raw bytes of a tensor (for uint8 JSON payloads such as comfy_quant).
  std::string_view rawBytes(const TensorEntry& entry) const;
  // After its bytes were copied elsewhere: MappedFile::releasePages over them.
  void releasePages(const TensorEntry& entry) const;

 private:
  SafetensorsFile() = default;
  std::filesystem::path path_;
  std::string label_;
  std::shared_ptr<const MappedFile> mapping_;
  SafetensorsHeader header_;
  std::unordered_map<std::string, std::size_t> index_;
};

// Refuses pickle checkpoints by extension with advice; does nothing for other paths.
void refusePickleFile(const std::filesystem::path& path);

// libtorch dtype of a safetensors dtype when one exists directly (nullopt for fp8, unsigned
// 16/32/64 and sub-byte formats).
std::optional<at::ScalarType> torchDTypeOf(DType dtype);
// The safetensors dtype of a libtorch dtype; throws std::invalid_argument when there is none.
DType safetensorsDTypeOf(at::ScalarType type);

}  // namespace shotchain::io
