#include "interop/comfy_model_words.h"

#include <algorithm>
#include <cctype>

namespace shotchain::interop {
namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// One DiT file in words: "Wan 2.2 TI2V, 5B (wan2.2_ti2v_5B_fp16.safetensors)".
std::string describeFile(const ModelSet& model, const std::string& file, const ModelFileReader& read) {
  const std::string name = std::filesystem::path(file).filename().string();
  std::filesystem::path path(file);
  if (path.is_relative() && !model.folder.empty()) path = std::filesystem::path(model.folder) / path;
  std::error_code error;
  if (read && std::filesystem::is_regular_file(path, error))
    if (const std::string header = read(path); !header.empty()) return header + " (" + name + ")";
  const std::string family = familyFromFileName(name);
  return family.empty() ? name + " (a model family its name does not tell, and the file is not here to read)"
                        : family + " by its name (" + name + ", not here to read)";
}

}  // namespace

std::string familyFromFileName(const std::string& fileName) {
  std::string n = fileName;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(n.begin(), n.end(), '-', '_');
  const bool wan22 = has(n, "wan2.2") || has(n, "wan2_2") || has(n, "wan22");
  const bool wan21 = has(n, "wan2.1") || has(n, "wan2_1") || has(n, "wan21");
  if (has(n, "skyreels")) return has(n, "df") ? "SkyReels-V2 diffusion forcing" : "SkyReels-V2";
  if (has(n, "self_forcing") || has(n, "causvid") || has(n, "longlive")) return "a causal streaming Wan 2.1 T2V (Self-Forcing family)";
  if (wan22 && has(n, "ti2v")) return "Wan 2.2 TI2V-5B";
  if (wan22 && has(n, "i2v")) return std::string("Wan 2.2 I2V-A14B") + (has(n, "high") ? " high-noise expert" : has(n, "low") ? " low-noise expert" : "");
  if (wan22 && has(n, "t2v")) return std::string("Wan 2.2 T2V-A14B") + (has(n, "high") ? " high-noise expert" : has(n, "low") ? " low-noise expert" : "");
  if (wan21 && has(n, "i2v")) return "Wan 2.1 I2V (not supported: it needs a CLIP image encoder)";
  if (wan21 && has(n, "flf2v")) return "Wan 2.1 FLF2V (not supported)";
  if (wan21 && has(n, "vace")) return "Wan 2.1 VACE (not supported)";
  if (wan21 && (has(n, "1.3b") || has(n, "1_3b"))) return "Wan 2.1 T2V-1.3B";
  if (wan21 && has(n, "14b")) return "Wan 2.1 T2V-14B";
  if (wan21 || wan22) return wan21 ? "Wan 2.1" : "Wan 2.2";
  return "";
}

std::string describeImportedModels(const ModelSet& model, const ModelFileReader& read) {
  if (model.isBuiltin()) return "the built-in " + model.builtin + " model";
  if (model.dit.empty()) return "no diffusion model";
  if (model.ditHighNoise.empty()) return describeFile(model, model.dit, read);
  return "two experts: " + describeFile(model, model.ditHighNoise, read) + " for the high-noise steps, " +
         describeFile(model, model.dit, read) + " for the rest";
}

}  // namespace shotchain::interop
