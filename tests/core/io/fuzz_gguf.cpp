// libFuzzer entry: the GGUF container parser must reject or accept every input without crashing, reading out of
// bounds, or allocating from unchecked numbers; an accepted file's tensors lie inside it and overlap nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "io/gguf_header.h"
#include "io/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const shotchain::io::GgufHeader header = shotchain::io::parseGgufHeader("fuzz.gguf", bytes);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    for (const auto& tensor : header.tensors) {
      if (tensor.begin > size || tensor.bytes > size - tensor.begin) __builtin_trap();
      spans.emplace_back(tensor.begin, tensor.begin + tensor.bytes);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
      if (spans[i - 1].second > spans[i].first) __builtin_trap();
  } catch (const shotchain::io::SafetensorsError&) {
  }
  return 0;
}
