#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "continuity/cut_metrics.h"
#include "render/render_events.h"
#include "resolve/resolved_shot.h"
#include "sequence/sequence.h"

// Torch-free, so the studio can read what a render folder holds without libtorch in its headers.
namespace shotchain::render {

// A finished shot in a render folder (shots/<NN>-<id>): its record's key and figures, with its
// frames and tail on disk.
struct FinishedShotFolder {
  std::filesystem::path directory;
  std::string key;
  int framesWritten = 0;
  std::optional<continuity::CutMetrics> cutIn;
  std::optional<StepCacheFigures> cache;
  std::optional<ExpertFigures> experts;
};

// The folder of shot `id` (at `index` now) in `outputDirectory` whose result is complete: the one that
// holds `key` (its own number first, then any other number: the shot moved since it was rendered),
// else its own number's folder whatever key it holds (out of date). nullopt when there is none.
std::optional<FinishedShotFolder> findFinishedShot(const std::filesystem::path& outputDirectory, int index,
                                                   const std::string& id, const std::string& key);

// Moves each enabled shot's folder that a reorder left under another number, and that holds the key
// the shot has now, to its current number, replacing whatever that number held (a result of another
// key). After this, shotDirectory(out, i, id) is where a re-usable shot is.
void adoptMovedShots(const std::filesystem::path& outputDirectory, const Sequence& sequence,
                     const std::vector<std::string>& keys);

// The key every shot would render under now (shotKeys with the model files' digests), for a caller outside a
// render, each file's digest from `ofFile` (io::contentDigest, or one that only looks digests up so that the
// GUI thread reads no weights). Throws std::runtime_error naming the field when the model files could not be read.
std::vector<std::string> currentShotKeys(const resolve::ResolvedSequence& resolved,
                                         const std::function<std::string(const std::filesystem::path&)>& ofFile);

}  // namespace shotchain::render
