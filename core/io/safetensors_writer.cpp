#include "io/safetensors_writer.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/dtype.h"
#include "io/safetensors_reader.h"
#include "util/atomic_file.h"

namespace shotchain::io {

std::string encodeSafetensors(const NamedTensors& tensors, const Metadata& metadata) {
  struct Item {
    const std::string* name;
    at::Tensor data;  // contiguous, on the CPU
    DType dtype;
  };
  std::vector<Item> items;
  std::set<std::string> seen;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__") throw std::invalid_argument("a tensor cannot be named __metadata__");
    if (!seen.insert(name).second) throw std::invalid_argument("duplicate tensor name \"" + name + "\"");
    items.push_back({&name, tensor.detach().to(at::kCPU).contiguous(), safetensorsDTypeOf(tensor.scalar_type())});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    const unsigned sizeA = dtypeBits(a.dtype), sizeB = dtypeBits(b.dtype);
    return sizeA != sizeB ? sizeA > sizeB : *a.name < *b.name;
  });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const Item& item : items) {
    const auto bytes = static_cast<std::uint64_t>(item.data.numel()) * item.data.element_size();
    header[*item.name] = {{"dtype", std::string(dtypeName(item.dtype))},
                          {"shape", item.data.sizes().vec()},
                          {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + json.size() + offset);
  const std::uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  out += json;
  for (const Item& item : items) {
    const auto bytes = static_cast<std::size_t>(item.data.numel()) * item.data.element_size();
    if (bytes > 0) out.append(static_cast<const char*>(item.data.data_ptr()), bytes);
  }
  return out;
}

void saveSafetensors(const std::filesystem::path& path, const NamedTensors& tensors, const Metadata& metadata) {
  util::writeFileAtomically(path, encodeSafetensors(tensors, metadata));
}

}  // namespace shotchain::io
