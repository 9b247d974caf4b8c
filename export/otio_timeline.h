#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace shotchain::exporting {

struct OtioShot {
  std::string id;
  std::string name;
  std::string prompt;
  std::uint64_t seed = 0;
  std::string continuityMode;  // as the document spells it: "none", "latent", …
  std::string key;             // the shot's render key
  int startFrame = 0;          // first frame of the shot inside the movie
  int frames = 0;
  std::string framesUrl;  // the shot's frames folder, ending in '/', e.g. "shots/01-a/frames/"
};

struct OtioTimeline {
  std::string name;
  double fps = 16;
  std::string movieUrl = "sequence.mp4";  // relative to the .otio file
  int movieFrames = 0;
  std::vector<OtioShot> shots;
};

// The timeline as OpenTimelineIO JSON: Timeline.1 → Stack.1 → one Track.1 (kind Video) → one
// Clip.2 per shot. A clip's source_range is its span of the movie (rate = fps); its active
// reference ("DEFAULT_MEDIA") is an ExternalReference.1 to the movie, with a second reference
// ("frames") to its PNG frames as an ImageSequenceReference.1 over the same range; its metadata
// holds {"shotchain": {id, prompt, seed, continuity, key}}.
std::string otioTimelineJson(const OtioTimeline& timeline);

// Writes otioTimelineJson atomically. Throws FileWriteError naming the file.
void writeOtioTimeline(const OtioTimeline& timeline, const std::filesystem::path& path);

}  // namespace shotchain::exporting
