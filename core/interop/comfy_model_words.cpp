#include "interop/comfy_model_words.h"

namespace shotchain::interop {
namespace {

// One DiT file in words: "Wan 2.2 TI2V, 5B (wan2.2_ti2v_5B_fp16.safetensors)".
std::string describeFile(const ModelSet& model, const std::string& file, const ModelFileReader& read,
                         const FamilyFromName& byName) {
  const std::string name = std::filesystem::path(file).filename().string();
  std::filesystem::path path(file);
  if (path.is_relative() && !model.folder.empty()) path = std::filesystem::path(model.folder) / path;
  std::error_code error;
  if (read && std::filesystem::is_regular_file(path, error))
    if (const std::string header = read(path); !header.empty()) return header + " (" + name + ")";
  const std::string family = byName ? byName(name) : std::string();
  return family.empty() ? name + " (a model family its name does not tell, and the file is not here to read)"
                        : family + " by its name (" + name + ", not here to read)";
}

}  // namespace

std::string describeImportedModels(const ModelSet& model, const ModelFileReader& read, const FamilyFromName& byName) {
  if (model.isBuiltin()) return "the built-in " + model.builtin + " model";
  if (model.dit.empty()) return "no diffusion model";
  if (model.ditHighNoise.empty()) return describeFile(model, model.dit, read, byName);
  return "two experts: " + describeFile(model, model.ditHighNoise, read, byName) + " for the high-noise steps, " +
         describeFile(model, model.dit, read, byName) + " for the rest";
}

}  // namespace shotchain::interop
