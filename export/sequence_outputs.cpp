#include "export/sequence_outputs.h"

#include <stdexcept>

#include "export/mp4_encoder.h"
#include "export/otio_timeline.h"
#include "export/shot_paths.h"
#include "render/render_options.h"
#include "sequence/sequence.h"

namespace shotchain::exporting {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> shotFrames(const ShotOutput& shot) {
  const fs::path folder = framesDirectory(shot.directory);
  const std::string label = "shot '" + shot.id + "'";
  if (!fs::is_directory(folder))
    throw std::runtime_error(folder.string() + ": missing: " + label + " has no frames on disk; render it again");
  std::vector<fs::path> frames;
  for (int n = 1; shot.frames <= 0 || n <= shot.frames; ++n) {
    fs::path frame = frameFile(shot.directory, n);
    if (!fs::is_regular_file(frame)) {
      if (shot.frames <= 0 && n > 1) break;
      throw std::runtime_error(folder.string() + ": " + label + " is missing frame " + frameFileName(n) +
                               (shot.frames > 0 ? " of " + std::to_string(shot.frames) : std::string()) +
                               "; render it again");
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

// A path relative to OUT with '/' separators, for the .otio file that lives in OUT.
std::string relativeUrl(const fs::path& path, const fs::path& out) {
  return path.lexically_relative(out).generic_string();
}

}  // namespace

SequenceOutputs describeOutputs(const Sequence& sequence, const render::RenderSummary& summary, const fs::path& out) {
  SequenceOutputs outputs;
  outputs.outputDirectory = out;
  outputs.name = sequence.settings.name;
  outputs.fps = sequence.settings.fps;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    if (!shot.enabled) continue;
    ShotOutput output;
    output.id = shot.id;
    output.name = shot.name;
    output.prompt = shot.prompt;
    output.seed = shot.seed;
    output.continuityMode = toString(shot.continuity.mode);
    output.directory = shotDirectory(out, static_cast<int>(i), shot.id);
    for (const auto& finished : summary.shots)
      if (finished.id == shot.id) {
        output.key = finished.key;
        if (finished.framesWritten > 0) output.frames = finished.framesWritten;
      }
    outputs.shots.push_back(std::move(output));
  }
  return outputs;
}

FinalizedOutputs finalizeOutputs(const SequenceOutputs& outputs) {
  if (outputs.shots.empty())
    throw std::runtime_error(outputs.outputDirectory.string() + ": no shots to put in the sequence");
  std::vector<fs::path> allFrames;
  OtioTimeline timeline;
  timeline.name = outputs.name;
  timeline.fps = outputs.fps;
  timeline.movieUrl = "sequence.mp4";
  for (const auto& shot : outputs.shots) {
    const auto frames = shotFrames(shot);
    OtioShot clip;
    clip.id = shot.id;
    clip.name = shot.name;
    clip.prompt = shot.prompt;
    clip.seed = shot.seed;
    clip.continuityMode = shot.continuityMode;
    clip.key = shot.key;
    clip.startFrame = static_cast<int>(allFrames.size());
    clip.frames = static_cast<int>(frames.size());
    clip.framesUrl = relativeUrl(framesDirectory(shot.directory), outputs.outputDirectory) + "/";
    timeline.shots.push_back(std::move(clip));
    allFrames.insert(allFrames.end(), frames.begin(), frames.end());
  }
  timeline.movieFrames = static_cast<int>(allFrames.size());

  FinalizedOutputs result;
  result.movie = outputs.outputDirectory / "sequence.mp4";
  result.timeline = outputs.outputDirectory / "sequence.otio";
  Mp4Encoding encoding = encodeSequenceMp4(allFrames, outputs.fps, result.movie);
  writeOtioTimeline(timeline, result.timeline);
  result.frames = encoding.frames;
  result.encoder = encoding.encoder;
  result.warnings = std::move(encoding.warnings);
  return result;
}

}  // namespace shotchain::exporting
