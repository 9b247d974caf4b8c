#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::io {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;
using Metadata = std::map<std::string, std::string>;

// The bytes of a safetensors file: header padded with spaces to a multiple of 8, tensors ordered
// by decreasing element size then name (so each is naturally aligned), no gaps. Tensors may live
// on any device and be non-contiguous. Throws std::invalid_argument for duplicate names and
// dtypes safetensors cannot hold.
std::string encodeSafetensors(const NamedTensors& tensors, const Metadata& metadata = {});

// encodeSafetensors, then an atomic write (temporary file + fsync + rename; FileWriteError).
void saveSafetensors(const std::filesystem::path& path, const NamedTensors& tensors, const Metadata& metadata = {});

}  // namespace shotchain::io
