#include "resolve/model_lookup.h"

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "models/model_files.h"

namespace shotchain::resolve {
namespace {

namespace fs = std::filesystem;

// What a file or folder looked like when it was read.
struct Stamp {
  fs::path path;
  std::uintmax_t size = 0;
  fs::file_time_type modified;
  bool operator==(const Stamp&) const = default;
};

Stamp stampOf(const fs::path& path) {
  std::error_code error;
  Stamp stamp{path, 0, {}};
  if (fs::is_regular_file(path, error)) stamp.size = fs::file_size(path, error);
  stamp.modified = fs::last_write_time(path, error);
  return stamp;
}

// The files a set reads, and the folders a models folder's components were found in.
std::vector<fs::path> watched(const models::ModelFiles& files, const ModelSet& model,
                              const fs::path& sequenceDirectory) {
  std::vector<fs::path> paths;
  for (const fs::path* file : {&files.dit, &files.ditHighNoise, &files.vae, &files.textEncoder, &files.tokenizer,
                               &files.latentRgb, &files.imageEncoder})
    if (!file->empty()) paths.push_back(*file);
  if (!model.folder.empty()) {
    const fs::path folder =
        fs::path(model.folder).is_absolute() ? fs::path(model.folder) : sequenceDirectory / model.folder;
    for (const char* sub : {"", "diffusion_models", "unet", "vae", "text_encoders", "clip", "clip_vision"})
      paths.push_back(folder / sub);
  }
  return paths;
}

struct Entry {
  ModelSetLookup lookup;
  std::vector<Stamp> stamps;
};

std::mutex cacheMutex;
std::map<std::pair<std::string, std::string>, Entry> cache;

std::string keyOf(const ModelSet& m) {
  return m.builtin + '\n' + m.folder + '\n' + m.dit + '\n' + m.ditHighNoise + '\n' + m.vae + '\n' + m.textEncoder +
         '\n' + m.tokenizer + '\n' + m.imageEncoder;
}

ModelSetLookup failure(const std::string& message) {
  ModelSetLookup lookup;
  const std::size_t colon = message.find(": ");
  const bool named = colon != std::string::npos && message.starts_with("model");
  lookup.field = named ? message.substr(0, colon) : "model";
  lookup.problem = named ? message.substr(colon + 2) : message;
  lookup.missing = message.find(" does not exist") != std::string::npos ||
                   message.find(" is not a folder") != std::string::npos ||
                   (message.find("no usable") != std::string::npos && message.find("; ") == std::string::npos);
  return lookup;
}

}  // namespace

ModelSetLookup lookUpModelSet(const ModelSet& model, const fs::path& sequenceDirectory) {
  const auto key = std::make_pair(keyOf(model), sequenceDirectory.string());
  {
    const std::lock_guard<std::mutex> lock(cacheMutex);
    if (const auto found = cache.find(key); found != cache.end()) {
      bool current = true;
      for (const Stamp& stamp : found->second.stamps) current = current && stampOf(stamp.path) == stamp;
      if (current) return found->second.lookup;
    }
  }
  models::ModelFiles files;
  try {
    files = models::resolveModelFiles(model, sequenceDirectory);
  } catch (const std::exception& error) {
    return failure(error.what());
  }
  Entry entry;
  for (const fs::path& path : watched(files, model, sequenceDirectory)) entry.stamps.push_back(stampOf(path));
  try {
    entry.lookup.facts = models::readModelSetFacts(files);
  } catch (const std::exception& error) {
    entry.lookup = failure(error.what());
  }
  const std::lock_guard<std::mutex> lock(cacheMutex);
  cache[key] = entry;
  return entry.lookup;
}

}  // namespace shotchain::resolve
