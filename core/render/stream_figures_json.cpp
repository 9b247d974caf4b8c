#include "render/stream_figures_json.h"

namespace shotchain::render {

nlohmann::ordered_json streamFiguresToJson(const StreamFigures& s) {
  return {{"cache", s.cache},
          {"frames_held", s.framesHeld},
          {"cache_bytes", s.cacheBytes},
          {"peak_cache_bytes", s.peakCacheBytes},
          {"bytes_copied", s.bytesCopied},
          {"frames_committed", s.framesCommitted},
          {"recache_seconds", s.recacheSeconds}};
}

StreamFigures streamFiguresFromJson(const nlohmann::ordered_json& json) {
  StreamFigures s;
  s.cache = json.value("cache", std::string());
  s.framesHeld = json.value("frames_held", 0);
  s.cacheBytes = json.value("cache_bytes", std::uint64_t{0});
  s.peakCacheBytes = json.value("peak_cache_bytes", std::uint64_t{0});
  s.bytesCopied = json.value("bytes_copied", std::uint64_t{0});
  s.framesCommitted = json.value("frames_committed", 0);
  s.recacheSeconds = json.value("recache_seconds", 0.0);
  return s;
}

nlohmann::ordered_json stepCacheFiguresToJson(const StepCacheFigures& c) {
  nlohmann::ordered_json json = {{"policy", c.policy}, {"threshold", c.threshold}, {"source", c.source}};
  if (!c.off.empty()) json["off"] = c.off;
  json["steps"] = c.steps;
  json["computed_passes"] = c.computedPasses;
  json["skipped_passes"] = c.skippedPasses;
  json["pattern"] = c.pattern;
  return json;
}

StepCacheFigures stepCacheFiguresFromJson(const nlohmann::ordered_json& json) {
  StepCacheFigures c;
  c.policy = json.value("policy", std::string());
  c.threshold = json.value("threshold", 0.0);
  c.source = json.value("source", std::string());
  c.off = json.value("off", std::string());
  c.steps = json.value("steps", 0);
  c.computedPasses = json.value("computed_passes", 0);
  c.skippedPasses = json.value("skipped_passes", 0);
  c.pattern = json.value("pattern", std::string());
  return c;
}

nlohmann::ordered_json loraFiguresToJson(const LoraFigures& l) {
  return {{"files", l.files},
          {"strengths", l.strengths},
          {"weights_patched", l.weightsPatched},
          {"bytes_written", l.bytesWritten},
          {"bytes_kept", l.bytesKept},
          {"seconds", l.seconds}};
}

LoraFigures loraFiguresFromJson(const nlohmann::ordered_json& json) {
  LoraFigures l;
  l.files = json.value("files", std::vector<std::string>());
  l.strengths = json.value("strengths", std::vector<double>());
  l.weightsPatched = json.value("weights_patched", 0);
  l.bytesWritten = json.value("bytes_written", std::uint64_t{0});
  l.bytesKept = json.value("bytes_kept", std::uint64_t{0});
  l.seconds = json.value("seconds", 0.0);
  return l;
}

nlohmann::ordered_json fewStepFiguresToJson(const FewStepFigures& f) {
  return {{"steps", f.steps},
          {"update", f.update},
          {"timesteps", f.timesteps},
          {"guidance", f.guidance},
          {"dit_passes", f.ditPasses}};
}

FewStepFigures fewStepFiguresFromJson(const nlohmann::ordered_json& json) {
  FewStepFigures f;
  f.steps = json.value("steps", std::vector<int>());
  f.update = json.value("update", std::string());
  f.timesteps = json.value("timesteps", std::vector<double>());
  f.guidance = json.value("guidance", 1.0);
  f.ditPasses = json.value("dit_passes", 0);
  return f;
}

nlohmann::ordered_json expertFiguresToJson(const ExpertFigures& f) {
  nlohmann::ordered_json json = {{"boundary", f.boundary},
                                 {"switch_step", f.switchStep},
                                 {"experts", f.experts},
                                 {"timesteps", f.timesteps},
                                 {"guidances", f.guidances}};
  if (!f.imageCondition.empty()) json["image_condition"] = f.imageCondition;
  if (!f.residency.empty()) {
    json["residency"] = f.residency;
    json["bytes_moved"] = f.bytesMoved;
    json["move_seconds"] = f.moveSeconds;
  }
  return json;
}

ExpertFigures expertFiguresFromJson(const nlohmann::ordered_json& json) {
  ExpertFigures f;
  f.boundary = json.value("boundary", 0.0);
  f.switchStep = json.value("switch_step", -1);
  f.experts = json.value("experts", std::vector<int>());
  f.timesteps = json.value("timesteps", std::vector<std::int64_t>());
  f.guidances = json.value("guidances", std::vector<double>());
  f.imageCondition = json.value("image_condition", std::string());
  f.residency = json.value("residency", std::string());
  f.bytesMoved = json.value("bytes_moved", std::uint64_t{0});
  f.moveSeconds = json.value("move_seconds", 0.0);
  return f;
}

}  // namespace shotchain::render
