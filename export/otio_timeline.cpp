#include "export/otio_timeline.h"

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"

namespace shotchain::exporting {
namespace {

using nlohmann::json;

json rationalTime(double value, double rate) {
  return {{"OTIO_SCHEMA", "RationalTime.1"}, {"rate", rate}, {"value", value}};
}

json timeRange(int start, int duration, double rate) {
  return {{"OTIO_SCHEMA", "TimeRange.1"},
          {"duration", rationalTime(duration, rate)},
          {"start_time", rationalTime(start, rate)}};
}

json movieReference(const OtioTimeline& timeline, const OtioShot& shot) {
  return {{"OTIO_SCHEMA", "ExternalReference.1"},
          {"name", timeline.movieUrl},
          {"metadata", json::object()},
          {"available_range", timeRange(shot.startFrame, shot.frames, timeline.fps)},
          {"available_image_bounds", nullptr},
          {"target_url", timeline.movieUrl}};
}

// Frame n of the clip's range is <framesUrl>/<start_frame + n, six digits>.png.
json framesReference(const OtioTimeline& timeline, const OtioShot& shot) {
  return {{"OTIO_SCHEMA", "ImageSequenceReference.1"},
          {"name", shot.framesUrl},
          {"metadata", json::object()},
          {"available_range", timeRange(shot.startFrame, shot.frames, timeline.fps)},
          {"available_image_bounds", nullptr},
          {"target_url_base", shot.framesUrl},
          {"name_prefix", ""},
          {"name_suffix", ".png"},
          {"start_frame", 1},
          {"frame_step", 1},
          {"rate", timeline.fps},
          {"frame_zero_padding", 6},
          {"missing_frame_policy", "error"}};
}

json clip(const OtioTimeline& timeline, const OtioShot& shot) {
  json references = {{"DEFAULT_MEDIA", movieReference(timeline, shot)}};
  if (!shot.framesUrl.empty()) references["frames"] = framesReference(timeline, shot);
  return {{"OTIO_SCHEMA", "Clip.2"},
          {"name", shot.name.empty() ? shot.id : shot.name},
          {"metadata",
           {{"shotchain",
             {{"id", shot.id},
              {"prompt", shot.prompt},
              {"seed", shot.seed},
              {"continuity", shot.continuityMode},
              {"key", shot.key}}}}},
          {"source_range", timeRange(shot.startFrame, shot.frames, timeline.fps)},
          {"effects", json::array()},
          {"markers", json::array()},
          {"enabled", true},
          {"media_references", references},
          {"active_media_reference_key", "DEFAULT_MEDIA"}};
}

}  // namespace

std::string otioTimelineJson(const OtioTimeline& timeline) {
  json clips = json::array();
  for (const auto& shot : timeline.shots) clips.push_back(clip(timeline, shot));
  const json track = {{"OTIO_SCHEMA", "Track.1"}, {"name", "Video 1"},        {"metadata", json::object()},
                      {"source_range", nullptr},  {"effects", json::array()}, {"markers", json::array()},
                      {"enabled", true},          {"children", clips},        {"kind", "Video"}};
  const json stack = {{"OTIO_SCHEMA", "Stack.1"},
                      {"name", "tracks"},
                      {"metadata", json::object()},
                      {"source_range", nullptr},
                      {"effects", json::array()},
                      {"markers", json::array()},
                      {"enabled", true},
                      {"children", json::array({track})}};
  const json document = {{"OTIO_SCHEMA", "Timeline.1"},
                         {"name", timeline.name},
                         {"metadata", {{"shotchain", {{"movie_frames", timeline.movieFrames}, {"fps", timeline.fps}}}}},
                         {"global_start_time", rationalTime(0, timeline.fps)},
                         {"tracks", stack}};
  return document.dump(4, ' ', false, json::error_handler_t::replace) + "\n";
}

void writeOtioTimeline(const OtioTimeline& timeline, const std::filesystem::path& path) {
  util::writeFileAtomically(path, otioTimelineJson(timeline));
}

}  // namespace shotchain::exporting
