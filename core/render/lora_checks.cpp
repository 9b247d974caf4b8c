#include "render/lora_checks.h"

#include "render/renderer.h"
#include "sequence/validation.h"
#include "util/bounded_file.h"

namespace shotchain::render {

void requireLoraFiles(const Sequence& sequence, const std::filesystem::path& sequenceDirectory, int first, int last) {
  for (int i = first; i <= last; ++i) {
    const Shot& shot = sequence.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled) continue;
    const std::vector<LoraRef>& loras = shot.loras ? *shot.loras : sequence.settings.loras;
    for (std::size_t k = 0; k < loras.size(); ++k) {
      const std::filesystem::path file(loras[k].file);
      const std::filesystem::path path = file.is_absolute() ? file : sequenceDirectory / file;
      if (const std::string problem = regularFileProblem(path, UINT64_MAX); !problem.empty()) {
        const std::string field = "loras[" + std::to_string(k) + "].file";
        throw RenderError(shot.loras ? shotPath(static_cast<std::size_t>(i), field) : field, path.string() + ": " + problem);
      }
    }
  }
}

bool anyLoras(const Sequence& sequence, int first, int last) {
  for (int i = first; i <= last; ++i) {
    const Shot& shot = sequence.shots[static_cast<std::size_t>(i)];
    if (shot.enabled && !(shot.loras ? *shot.loras : sequence.settings.loras).empty()) return true;
  }
  return false;
}

}  // namespace shotchain::render
