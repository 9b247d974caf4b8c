#include "render/shot_folders.h"

#include <algorithm>

#include "models/model_files.h"
#include "render/output_layout.h"
#include "render/shot_key.h"
#include "render/shot_record.h"

namespace shotchain::render {
namespace {

namespace fs = std::filesystem;

bool complete(const fs::path& dir, const ShotRecord& record) {
  return framesComplete(dir, record.framesWritten) && shotTailPresent(dir);
}

FinishedShotFolder folderOf(const fs::path& dir, const ShotRecord& record) {
  return {dir, record.key, record.framesWritten, record.cutIn, record.cache, record.experts};
}

// shots/<NN>-<id> folders of `id`, under any number (its own too: rank 0 of a render spread over processes
// may be moving it there while another rank looks).
std::vector<fs::path> anyNumber(const fs::path& out, const std::string& id) {
  std::vector<fs::path> found;
  const std::string suffix = "-" + safeFileComponent(id);
  std::error_code error;
  for (fs::directory_iterator it(out / "shots", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    const std::string number = name.substr(0, name.size() - suffix.size());
    if (number.find_first_not_of("0123456789") == std::string::npos) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::optional<fs::path> folderWithKey(const fs::path& out, const std::string& id, const std::string& key) {
  for (const fs::path& dir : anyNumber(out, id)) {
    const std::optional<ShotRecord> record = readShotRecord(dir);
    if (record && record->id == id && record->key == key && complete(dir, *record)) return dir;
  }
  return std::nullopt;
}

}  // namespace

std::optional<FinishedShotFolder> findFinishedShot(const fs::path& outputDirectory, int index, const std::string& id,
                                                   const std::string& key) {
  const fs::path own = shotDirectory(outputDirectory, index, id);
  const std::optional<ShotRecord> ownRecord = readShotRecord(own);
  const bool ownComplete = ownRecord && ownRecord->id == id && complete(own, *ownRecord);
  if (ownComplete && ownRecord->key == key) return folderOf(own, *ownRecord);
  if (!key.empty())
    if (const std::optional<fs::path> moved = folderWithKey(outputDirectory, id, key))
      return folderOf(*moved, *readShotRecord(*moved));
  if (ownComplete) return folderOf(own, *ownRecord);
  return std::nullopt;
}

void adoptMovedShots(const fs::path& outputDirectory, const Sequence& sequence, const std::vector<std::string>& keys) {
  for (std::size_t i = 0; i < sequence.shots.size() && i < keys.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    if (!shot.enabled) continue;
    const int index = static_cast<int>(i);
    const fs::path own = shotDirectory(outputDirectory, index, shot.id);
    const std::optional<ShotRecord> ownRecord = readShotRecord(own);
    if (ownRecord && ownRecord->key == keys[i] && complete(own, *ownRecord)) continue;
    const std::optional<fs::path> moved = folderWithKey(outputDirectory, shot.id, keys[i]);
    if (!moved || *moved == own) continue;
    fs::remove_all(own);
    fs::rename(*moved, own);
  }
}

std::vector<std::string> currentShotKeys(const resolve::ResolvedSequence& resolved,
                                         const std::function<std::string(const fs::path&)>& ofFile) {
  if (resolved.models.assumed) {
    for (const Diagnostic& d : resolved.problems)
      if (d.path.starts_with("model")) throw std::runtime_error(d.path + ": " + d.message);
    throw std::runtime_error("model: the model files cannot be read");
  }
  return shotKeys(resolved, modelFingerprint(resolved.models.files, ofFile), ofFile);
}

}  // namespace shotchain::render
