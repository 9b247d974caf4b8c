#include "models/gguf_tensor_types.h"

#include "models/model_registry.h"

namespace shotchain::models {

io::GgmlType ggufTensorType(const ModelFamilyRow* row, const std::string& name, const std::vector<std::uint64_t>& shape,
                            io::GgmlType wanted) {
  std::uint64_t elements = 1;
  for (const std::uint64_t d : shape) elements *= d;
  if (shape.size() != 2 || elements <= 1024) return io::GgmlType::F32;
  if (row != nullptr && row->ggufKeepsUnquantised != nullptr && row->ggufKeepsUnquantised(name))
    return io::GgmlType::F32;
  return shape.back() % io::ggmlTraits(wanted).blockElements == 0 ? wanted : io::GgmlType::F16;
}

}  // namespace shotchain::models
