// libFuzzer entry: the header parser must reject or accept every input without crashing,
// reading out of bounds, or allocating from unchecked numbers.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const shotchain::io::SafetensorsHeader header =
        shotchain::io::parseSafetensorsHeader("fuzz.safetensors", bytes, size);
    // Accepted: every tensor must lie inside the buffer.
    for (const auto& tensor : header.tensors)
      if (tensor.end > size - header.dataOffset) __builtin_trap();
  } catch (const shotchain::io::SafetensorsError&) {
  }
  return 0;
}
