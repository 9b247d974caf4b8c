#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/ggml_types.h"

namespace shotchain::models {

struct ModelFamilyRow;

// The type `convert … OUT.gguf --type T` writes a tensor in, as llama.cpp's quantiser chooses for the family:
// vectors, tensors of at most 1024 values, tensors of more than 2 dimensions and what the family keeps
// unquantised (`row`, may be null) stay F32; rows that are not whole blocks of `wanted` fall back to F16.
io::GgmlType ggufTensorType(const ModelFamilyRow* row, const std::string& name, const std::vector<std::uint64_t>& shape,
                            io::GgmlType wanted);

}  // namespace shotchain::models
