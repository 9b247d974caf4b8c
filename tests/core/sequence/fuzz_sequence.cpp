// libFuzzer entry: the sequence parser must accept or refuse every input with diagnostics — no crash,
// no exception, no unbounded recursion — and an accepted document must survive a save and reload.
// The same input goes to the ComfyUI importer: it imports or throws std::runtime_error naming the
// file (any other exception escapes and is a finding), and what it imports that validates saves and
// reloads unchanged.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "interop/comfy_import.h"
#include "sequence/sequence_io.h"
#include "sequence/validation.h"

namespace {

void roundTrip(const shotchain::Sequence& sequence) {
  const shotchain::LoadResult again = shotchain::parseSequence(shotchain::serializeSequence(sequence));
  if (!again.ok() || !(*again.sequence == sequence)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const shotchain::LoadResult loaded = shotchain::parseSequence(text);
  if (loaded.ok())
    roundTrip(*loaded.sequence);
  else if (!shotchain::hasErrors(loaded.diagnostics))
    __builtin_trap();  // refused without saying why

  // The image-latent and image-to-video node words of two families, written here: the registry that holds them
  // (models::comfyWordsOfFamilies) needs libtorch, which this fuzzer does not link.
  shotchain::interop::ComfyImportOptions options;
  options.families = {{.latentNode = "ImageLatentA", .latentTakesStartImage = true},
                      {.imageToVideoNode = "ImageToVideoB"}};
  shotchain::interop::ComfyImport imported;
  try {
    imported = shotchain::interop::importComfyWorkflow(std::string(text), "fuzz.json", options);
  } catch (const std::runtime_error& error) {
    if (std::string_view(error.what()).rfind("fuzz.json: ", 0) != 0) __builtin_trap();  // a message without the file
    return 0;
  }
  if (!shotchain::hasErrors(shotchain::validateSequence(imported.sequence))) roundTrip(imported.sequence);
  return 0;
}
