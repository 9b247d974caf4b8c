#include "models/model_files.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "io/weight_set.h"
#include "models/model_family.h"
#include "models/model_memory.h"
#include "models/model_registry.h"

namespace shotchain::models {
namespace fs = std::filesystem;

namespace {

fs::path executableDirectory() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : exe.parent_path();
}

bool isDirectory(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

bool isFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

fs::path resolveAgainst(const fs::path& base, const std::string& path) {
  const fs::path p(path);
  return (p.is_absolute() ? p : base / p).lexically_normal();
}

// An explicit component file: relative to the folder when there is one (falling back to the
// sequence folder), else to the sequence folder.
fs::path explicitFile(const std::string& field, const std::string& path, const fs::path& folder,
                      const fs::path& sequenceDirectory) {
  std::vector<fs::path> tried;
  if (!folder.empty()) tried.push_back(resolveAgainst(folder, path));
  tried.push_back(resolveAgainst(sequenceDirectory, path));
  for (const fs::path& candidate : tried)
    if (isFile(candidate) || isFile(fs::path(candidate.string() + ".index.json"))) return candidate;
  throw std::runtime_error(field + ": " + tried.front().string() + " does not exist");
}

bool isWeightsFile(const fs::path& path) {
  const std::string name = path.filename().string();
  auto endsWith = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return endsWith(".safetensors") || endsWith(".safetensors.index.json") || endsWith(".pt") || endsWith(".pth") ||
         endsWith(".gguf");
}

// Every weights file below `dir`, walked folder by folder: an entry that cannot be examined (a
// unreadable folder, a vanished /proc entry) is skipped, never the end of the walk. Symbolic links to folders are not followed (they could loop); links to files are.
void collectWeightsFiles(const fs::path& dir, std::vector<fs::path>& files) {
  std::vector<fs::path> pending{dir};
  while (!pending.empty()) {
    const fs::path current = std::move(pending.back());
    pending.pop_back();
    std::error_code error;
    fs::directory_iterator it(current, fs::directory_options::skip_permission_denied, error);
    if (error == std::errc::filename_too_long) {
      files.push_back(current);  // listed with its problem: nothing under it can be opened by name
      continue;
    }
    for (const fs::directory_iterator end; !error && it != end; it.increment(error)) {
      std::error_code entryError;
      const fs::file_status own = it->symlink_status(entryError);
      if (entryError == std::errc::filename_too_long) files.push_back(it->path());  // as above
      if (entryError) continue;
      if (fs::is_directory(own)) {
        pending.push_back(it->path());
        continue;
      }
      // Not only regular files: a FIFO or a looping link named like weights is listed, and its
      // reader says what it is (io/mapped_file.cpp never blocks on one).
      if (isWeightsFile(it->path())) files.push_back(it->path());
    }
  }
}

// The weights files under the first of `subfolders` of `folder` that exist, sorted by path.
// A shard "x-00001-of-00002.safetensors" is skipped when its index file is there.
std::vector<fs::path> weightsFilesUnder(const fs::path& folder, const std::vector<const char*>& subfolders) {
  std::vector<fs::path> files;
  for (const char* sub : subfolders) {
    const fs::path dir = folder / sub;
    if (isDirectory(dir)) collectWeightsFiles(dir, files);
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> kept;
  for (const fs::path& f : files) {
    const std::string name = f.filename().string();
    const bool shard = name.find("-of-") != std::string::npos && name.find(".index.json") == std::string::npos;
    if (shard) {
      const auto dash = name.rfind('-', name.find("-of-") - 1);
      const fs::path index = f.parent_path() / (name.substr(0, dash) + ".safetensors.index.json");
      if (dash != std::string::npos && isFile(index)) continue;
    }
    kept.push_back(f);
  }
  return kept;
}

// What a weights file holds, from its header alone ("" when unreadable or of no known family).
struct Identified {
  std::string kind;     // "dit", "vae", "text_encoder"
  std::string problem;  // why a file of that kind cannot be used
};

Identified identify(const fs::path& file) {
  try {
    const IdentifiedModel id = identifyModel(io::WeightSet::open(file));
    return {roleName(id.role), id.problem};
  } catch (const std::exception& error) {
    return {"", error.what()};
  }
}

// `mismatch` (optional): why a usable file does not fit the rest of the set (empty when it fits), so that a
// folder holding the VAEs of two families (Wan 2.1's and Wan 2.2's) gives the DiT the one it needs.
fs::path detectIn(const fs::path& folder, const std::vector<const char*>& subfolders, const std::string& kind,
                  const std::string& what, const std::string& field,
                  const std::function<std::string(const fs::path&)>& mismatch = {}) {
  std::vector<fs::path> found;
  std::vector<std::string> rejected;
  for (const fs::path& file : weightsFilesUnder(folder, subfolders)) {
    const Identified id = identify(file);
    const std::string misfit = id.kind == kind && id.problem.empty() && mismatch ? mismatch(file) : std::string();
    if (id.kind == kind && id.problem.empty() && misfit.empty())
      found.push_back(file);
    else if (id.kind == kind)
      rejected.push_back(file.filename().string() + " (" + (misfit.empty() ? id.problem : misfit) + ")");
  }
  std::string where;
  for (const char* sub : subfolders) where += (where.empty() ? "" : " or ") + (folder / sub).string();
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    std::string message = "model.folder: no usable " + what + " in " + where;
    for (const std::string& r : rejected) message += "; " + r;
    throw std::runtime_error(message + " (name the file in " + field + ")");
  }
  std::string names;
  for (const fs::path& f : found) names += (names.empty() ? "" : ", ") + f.filename().string();
  throw std::runtime_error("model.folder: several " + what + " files in " + where + ": " + names + "; name one in " +
                           field);
}

// The two experts of a pair run the same latents through the same layers: their headers must agree.
void requireSameShapes(const fs::path& high, const fs::path& low) {
  const auto highModel = ditMemoryModel(high), lowModel = ditMemoryModel(low);
  if (highModel->family() != lowModel->family() || highModel->parameterCount() != lowModel->parameterCount() ||
      highModel->latentChannels() != lowModel->latentChannels())
    throw std::runtime_error("model.dit_high_noise: " + high.string() + " (" + highModel->family() + ", " +
                             highModel->variant() + ") is not the other expert of " + low.string() + " (" +
                             lowModel->family() + ", " + lowModel->variant() +
                             "): the two experts of a pair have the same family and shapes");
}

ModelFiles builtinFiles(const std::string& name) {
  const fs::path dir = builtinModelDirectory(name);
  ModelFiles files;
  files.dit = dir / "dit.safetensors";
  files.vae = dir / "vae.safetensors";
  files.textEncoder = dir / "text_encoder.safetensors";
  if (isFile(dir / "tokenizer.model")) files.tokenizer = dir / "tokenizer.model";
  if (isFile(dir / "latent_rgb.safetensors")) files.latentRgb = dir / "latent_rgb.safetensors";
  files.description = "builtin:" + name + " (" + dir.string() + ")";
  return files;
}

}  // namespace

fs::path builtinModelDirectory(const std::string& name) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("SHOTCHAIN_RESOURCE_DIR"); env && *env) candidates.push_back(fs::path(env) / name);
  if (const fs::path exe = executableDirectory(); !exe.empty())
    candidates.push_back((exe / ".." / "share" / "shotchain" / name).lexically_normal());
#ifdef SHOTCHAIN_SOURCE_RESOURCES
  candidates.push_back(fs::path(SHOTCHAIN_SOURCE_RESOURCES) / name);
#endif
  for (const fs::path& candidate : candidates)
    if (isDirectory(candidate)) return candidate;
  return candidates.empty() ? fs::path(name) : candidates.back();
}

std::vector<fs::path> weightsFilesIn(const fs::path& folder) { return weightsFilesUnder(folder, {""}); }

ModelFiles resolveModelFiles(const ModelSet& model, const fs::path& sequenceDirectory) {
  if (model.isBuiltin()) {
    if (!isBuiltinModel(model.builtin)) throw std::runtime_error("model: " + notABuiltinModel(model.builtin));
    return builtinFiles(model.builtin);
  }
  fs::path folder;
  if (!model.folder.empty()) {
    folder = resolveAgainst(sequenceDirectory, model.folder);
    if (!isDirectory(folder)) throw std::runtime_error("model.folder: " + folder.string() + " is not a folder");
  }
  auto component = [&](const std::string& field, const std::string& path, const std::vector<const char*>& subfolders,
                       const std::string& kind, const std::string& what,
                       const std::function<std::string(const fs::path&)>& mismatch = {}) -> fs::path {
    if (!path.empty()) return explicitFile(field, path, folder, sequenceDirectory);
    if (folder.empty())
      throw std::runtime_error(field + ": missing: give a \"folder\" or all of dit, vae and text_encoder");
    return detectIn(folder, subfolders, kind, what, field, mismatch);
  };
  ModelFiles files;
  files.dit = component("model.dit", model.dit, {"diffusion_models", "unet"}, "dit", "DiT");
  if (!model.ditHighNoise.empty()) {
    files.ditHighNoise = explicitFile("model.dit_high_noise", model.ditHighNoise, folder, sequenceDirectory);
    requireSameShapes(files.ditHighNoise, files.dit);
  }
  std::int64_t channels = 0;
  try {
    channels = ditMemoryModel(files.dit)->latentChannels();
  } catch (const std::exception&) {
    // The DiT's own loader says what is wrong with it; the VAE is then found by its header alone.
  }
  files.vae = component("model.vae", model.vae, {"vae"}, "vae", "VAE", [&](const fs::path& file) -> std::string {
    const std::int64_t z = vaeMemoryModel(file)->geometry().latentChannels;
    if (channels == 0 || z == channels) return {};
    return "its latents have " + std::to_string(z) + " channels; the DiT needs " + std::to_string(channels);
  });
  files.textEncoder =
      component("model.text_encoder", model.textEncoder, {"text_encoders", "clip"}, "text_encoder", "text encoder");
  if (!model.tokenizer.empty())
    files.tokenizer = explicitFile("model.tokenizer", model.tokenizer, folder, sequenceDirectory);
  if (!model.imageEncoder.empty())
    files.imageEncoder = explicitFile("model.image_encoder", model.imageEncoder, folder, sequenceDirectory);
  else if (!folder.empty() && isDirectory(folder / "clip_vision"))
    for (const fs::path& file : weightsFilesUnder(folder, {"clip_vision"}))
      if (const Identified id = identify(file); id.kind == "image_encoder" && id.problem.empty()) {
        files.imageEncoder = file;
        break;
      }
  if (!folder.empty() && channels > 0 && isDirectory(folder / "vae_approx"))
    for (const fs::path& file : weightsFilesUnder(folder, {"vae_approx"})) {
      try {
        const io::WeightSet weights = io::WeightSet::open(file);
        const auto [row, id] = identifyFamily(weights);
        if (row != nullptr && id.role == ModelRole::PreviewDecoder && id.problem.empty() &&
            row->previewLatentChannels(weights) == channels) {
          files.previewDecoder = file;
          break;
        }
      } catch (const std::exception&) {
        // Another file of the folder may serve; previews fall back to the latent mosaic.
      }
    }
  files.description = folder.empty() ? "files named in the sequence" : "models folder " + folder.string();
  return files;
}

}  // namespace shotchain::models
