#include "sequence/shot_rules.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "sequence/continuity_modes.h"
#include "sequence/edits.h"
#include "sequence/validation.h"

namespace shotchain {
namespace {

// The demo model's render size (demo::kDemoWidth/kDemoHeight; that header pulls in ATen).
constexpr int kDemoSide = 64;

std::filesystem::path absoluteNormal(const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) absolute = path;
  absolute = absolute.lexically_normal();
  if (!absolute.has_filename() && absolute.has_relative_path()) absolute = absolute.parent_path();
  return absolute;
}

}  // namespace

Shot defaultShotAfter(const Sequence& sequence, std::size_t previous) {
  Shot shot;
  if (!sequence.shots.empty()) {
    const Shot& before = sequence.shots[std::min(previous, sequence.shots.size() - 1)];
    shot.width = before.width;
    shot.height = before.height;
    shot.frames = before.frames;
    shot.prompt = before.prompt;
    shot.negativePrompt = before.negativePrompt;
    shot.seed = before.seed;
    // A shot without a tag writes no tail, so there is nothing to continue from.
    if (!before.continuity.tag.empty()) {
      shot.continuity.mode = ContinuityMode::Latent;
      shot.continuity.tag = before.continuity.tag;
    }
  } else if (sequence.settings.model.isBuiltin()) {
    shot.width = kDemoSide;
    shot.height = kDemoSide;
  }
  shot.id = sequence.unusedShotId();
  shot.name = "Shot " + std::to_string(sequence.shots.size() + 1);
  return shot;
}

void setFallbackImage(Shot& shot, std::string path) {
  shot.continuity.fallbackImage = std::move(path);
  if (!shot.continuity.fallbackImage.empty() && !usesHandoff(shot.continuity.mode))
    shot.continuity.mode = ContinuityMode::Blend;
}

const char* placeDroppedImage(Shot& shot, std::string path) {
  if (usesHandoff(shot.continuity.mode)) {
    setFallbackImage(shot, std::move(path));
    return "continuity.fallback_image";
  }
  shot.startImage = std::move(path);
  return "start_image";
}

Edit keyframeEdit(const Sequence& sequence, std::size_t index, bool end, const std::string& path) {
  const std::vector<Shot>& shots = sequence.shots;
  Shot shot = shots.at(index);
  std::string& field = end ? shot.endImage : shot.startImage;
  const std::size_t other = end ? index + 1 : index - 1;  // the neighbour across the cut (wraps past 0: none)
  const bool shared =
      !field.empty() && other < shots.size() && (end ? shots[other].startImage : shots[other].endImage) == field;
  field = path;
  if (!shared) return SetShot{index, std::move(shot)};
  Shot neighbour = shots[other];
  (end ? neighbour.startImage : neighbour.endImage) = path;
  if (end) return ReplaceShots{index, 2, {std::move(shot), std::move(neighbour)}};
  return ReplaceShots{other, 2, {std::move(neighbour), std::move(shot)}};
}

std::string documentPath(const std::filesystem::path& baseFolder, const std::filesystem::path& file) {
  const std::filesystem::path absolute = absoluteNormal(file);
  if (baseFolder.empty()) return absolute.generic_string();
  const std::filesystem::path relative = absolute.lexically_relative(absoluteNormal(baseFolder));
  if (relative.empty() || *relative.begin() == "..") return absolute.generic_string();
  return relative.generic_string();
}

int splitFrameNear(const Shot& shot, int offset, int frameStep) {
  const int blocks = (shot.frames - 1) / frameStep;
  const int lastHead = std::max(1, blocks - 1);
  const int headBlocks = offset > 0 && offset < shot.frames
                             ? std::clamp((offset + frameStep / 2) / frameStep, 1, lastHead)
                             : std::max(1, blocks / 2);
  return frameStep * headBlocks;
}

SplitResult splitShot(const Sequence& sequence, const std::string& shotId, int frame, int frameStep,
                      const std::string& newId) {
  SplitResult result;
  const auto refuse = [&result](std::string path, std::string message) {
    result.errors.push_back({Diagnostic::Severity::Error, std::move(path), std::move(message)});
    return result;
  };
  const std::optional<std::size_t> index = sequence.indexOf(shotId);
  if (!index) return refuse("shots", "cannot split: there is no shot \"" + shotId + "\"");
  const Shot& shot = sequence.shots[*index];
  const std::string what = "cannot split \"" + shot.displayName() + "\"";
  const std::string at = what + " at frame " + std::to_string(frame);
  if (!shot.enabled) return refuse(shotPath(*index, "enabled"), what + ": the shot is disabled");
  if (frameStep < 1) return refuse(shotPath(*index), what + ": a frame step of at least 1");
  const int minPart = frameStep + 1;  // two latents: the shared one and a new one
  if (shot.frames < 2 * minPart - 1)
    return refuse(shotPath(*index, "frames"), what + ": " + std::to_string(shot.frames) +
                                                  " frames is too short (a split needs at least " +
                                                  std::to_string(2 * minPart - 1) + ")");
  const int firstCut = minPart - 1;
  const int lastCut = shot.frames - minPart;
  if (frame < firstCut || frame > lastCut)
    return refuse(shotPath(*index), at + ": each part needs at least " + std::to_string(minPart) + " frames (cut at " +
                                        std::to_string(firstCut) + ".." + std::to_string(lastCut) + ")");
  if (frame % frameStep != 0) {
    const int lower = frame / frameStep * frameStep;
    return refuse(shotPath(*index), at + ": the cut must be on a latent boundary, a multiple of " +
                                        std::to_string(frameStep) + " (try " + std::to_string(lower) + " or " +
                                        std::to_string(lower + frameStep) + ")");
  }

  Shot head = shot;
  head.frames = frame + 1;
  Shot tail = shot;
  tail.id = newId.empty() ? sequence.unusedShotId() : newId;
  if (sequence.indexOf(tail.id))
    return refuse(shotPath(*index + 1, "id"),
                  what + ": the id \"" + tail.id + "\" for the second part is already used");
  tail.name = shot.displayName() + " (2)";
  tail.frames = shot.frames - frame;
  tail.continuity.mode = ContinuityMode::Latent;
  tail.continuity.fallbackImage.clear();
  tail.continuity.prefixFrames.reset();
  tail.continuity.conditionNoise.reset();

  Sequence split = sequence;
  EditResult applied = applyEdit(split, ReplaceShots{*index, 1, {std::move(head), std::move(tail)}});
  if (!applied.ok()) {
    for (Diagnostic& d : applied.errors) d.message = what + ": " + d.message;
    result.errors = std::move(applied.errors);
    return result;
  }
  result.sequence = std::move(split);
  return result;
}

std::optional<std::size_t> shotAtFrame(const Sequence& sequence, int frame) {
  if (frame < 0) return std::nullopt;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i)
    if (frame < sequence.startFrame(i) + sequence.shots[i].frames) return i;
  return std::nullopt;
}

}  // namespace shotchain

namespace shotchain {

int predecessorByTag(const Sequence& sequence, std::size_t index) {
  const std::string& tag = sequence.shots.at(index).continuity.tag;
  for (std::size_t i = index; i-- > 0;) {
    const Shot& shot = sequence.shots[i];
    if (shot.enabled && shot.continuity.tag == tag) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> streamChainBefore(const Sequence& sequence, std::size_t index) {
  std::vector<int> chain;
  int current = predecessorByTag(sequence, index);
  while (current >= 0) {
    chain.insert(chain.begin(), current);
    const Shot& shot = sequence.shots[static_cast<std::size_t>(current)];
    if (!streams(shot.continuity.mode)) break;
    current = predecessorByTag(sequence, static_cast<std::size_t>(current));
  }
  return chain;
}

}  // namespace shotchain
