// libFuzzer entry: the PyTorch checkpoint reader (zip directory, restricted unpickler, state-dict
// search) must reject or accept every input without crashing, reading out of bounds or allocating
// from unchecked numbers; an accepted tensor must lie inside its storage and the storage in the file.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/pt_archive.h"
#include "io/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const shotchain::io::PtArchive archive = shotchain::io::parsePtArchive("fuzz.pt", bytes);
    for (const auto& dict : archive.stateDicts) {
      for (const auto& tensor : dict.tensors) {
        const auto& storage = archive.storages.at(tensor.storage);
        if (storage.bytes.offset + storage.bytes.size > size) __builtin_trap();
        if (static_cast<std::uint64_t>(storage.elements) * (shotchain::io::dtypeBits(storage.dtype) / 8) >
            storage.bytes.size)
          __builtin_trap();
        if (tensor.elements() == 0) continue;
        std::uint64_t last = static_cast<std::uint64_t>(tensor.offset);
        for (std::size_t d = 0; d < tensor.sizes.size(); ++d)
          last += static_cast<std::uint64_t>(tensor.sizes[d] - 1) * static_cast<std::uint64_t>(tensor.strides[d]);
        if (last >= static_cast<std::uint64_t>(storage.elements)) __builtin_trap();
      }
    }
    (void)shotchain::io::choosePtStateDict("fuzz.pt", archive, {});
  } catch (const shotchain::io::SafetensorsError&) {
  }
  return 0;
}
