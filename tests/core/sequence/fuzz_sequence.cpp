// libFuzzer entry: the sequence parser must accept or refuse every input with diagnostics — no crash,
// no exception, no unbounded recursion — and an accepted document must survive a save and reload.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sequence/sequence_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const shotchain::LoadResult loaded = shotchain::parseSequence(text);
  if (!loaded.ok()) {
    if (!shotchain::hasErrors(loaded.diagnostics)) __builtin_trap();  // refused without saying why
    return 0;
  }
  const shotchain::LoadResult again = shotchain::parseSequence(shotchain::serializeSequence(*loaded.sequence));
  if (!again.ok() || !(*again.sequence == *loaded.sequence)) __builtin_trap();
  return 0;
}
