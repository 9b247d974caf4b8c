// libFuzzer target: the reader of a render folder's shot.json (what `--resume` trusts). Any input is either
// refused (the shot is rendered again) or read into a record that writes back to a text it reads again as the
// same record; nothing crashes, leaks or reads out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "render/shot_record_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shotchain::render;
  const std::optional<ShotRecord> record = parseShotRecord({reinterpret_cast<const char*>(data), size});
  if (!record) return 0;
  const std::string text = shotRecordText(*record);
  const std::optional<ShotRecord> again = parseShotRecord(text);
  if (!again || shotRecordText(*again) != text) __builtin_trap();
  return 0;
}
