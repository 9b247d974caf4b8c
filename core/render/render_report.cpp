#include "render/render_report.h"

#include <nlohmann/json.hpp>

#include "memory/memory_planner.h"
#include "render/cut_metrics_json.h"
#include "render/output_layout.h"
#include "render/resolved_shot_json.h"
#include "render/stream_figures_json.h"
#include "util/atomic_file.h"

namespace shotchain::render {
namespace {

using Json = nlohmann::ordered_json;

Json sampleToJson(int cut, const memory::MemorySample& s) {
  return {{"cut", cut},
          {"seconds", s.seconds},
          {"device", s.device},
          {"device_total", s.deviceTotal},
          {"device_free", s.deviceFree},
          {"allocated", s.allocated},
          {"reserved", s.reserved},
          {"active", s.active},
          {"peak_allocated", s.peakAllocated},
          {"cached_unused", s.cachedUnused()},
          {"inactive_split", s.inactiveSplit},
          {"free_fragmentation", s.freeFragmentation},
          {"alloc_retries", s.allocRetries},
          {"out_of_memory_events", s.outOfMemoryEvents},
          {"transferred_bytes", s.transferredBytes}};
}

Json shotToJson(const ShotFinished& shot, const resolve::ResolvedSequence& resolved) {
  Json json = {{"index", shot.index},
               {"id", shot.id},
               {"key", shot.key},
               {"reused", shot.reused},
               {"frames_written", shot.framesWritten},
               {"sample_seconds", shot.sampleSeconds},
               {"decode_seconds", shot.decodeSeconds},
               {"seconds", shot.seconds},
               {"first_frame_seconds", shot.firstFrameSeconds},
               {"conditioned_on", shot.conditionedOn},
               {"directory", shot.directory}};
  if (shot.stream) json["stream"] = streamFiguresToJson(*shot.stream);
  if (shot.cache) json["cache"] = stepCacheFiguresToJson(*shot.cache);
  if (shot.loras) json["loras"] = loraFiguresToJson(*shot.loras);
  if (shot.fewStep) json["few_step"] = fewStepFiguresToJson(*shot.fewStep);
  if (shot.experts) json["experts"] = expertFiguresToJson(*shot.experts);
  if (!shot.keyframes.empty()) json["keyframes"] = keyframeLandingsToJson(shot.keyframes);
  if (shot.index >= 0 && static_cast<std::size_t>(shot.index) < resolved.shots.size())
    json["resolved"] = resolvedShotToJson(resolved.shots[static_cast<std::size_t>(shot.index)]);
  return json;
}

Json reportJson(const Sequence& sequence, const RenderSummary& summary) {
  Json json;
  json["format"] = "shotchain.report/1";
  json["sequence"] = sequence.settings.name;
  json["fps"] = sequence.settings.fps;
  json["completed"] = summary.finished.completed;
  json["cancelled"] = summary.finished.cancelled;
  json["shots_rendered"] = summary.finished.shotsRendered;
  json["shots_reused"] = summary.finished.shotsReused;
  json["text_encoder"] = {{"loads", summary.textEncoderLoads},
                          {"prompts_encoded", summary.promptsEncoded},
                          {"prompts_from_cache", summary.promptsFromCache}};
  json["preview"] = {
      {"decoder", summary.previewDecoder.empty() ? nlohmann::json() : nlohmann::json(summary.previewDecoder)},
      {"decodes", summary.previewDecodes},
      {"seconds", summary.previewSeconds},
      {"seconds_each", summary.previewDecodes > 0 ? summary.previewSeconds / summary.previewDecodes : 0.0}};
  json["timings"] = {{"model_load_seconds", summary.modelLoadSeconds},
                     {"text_encode_seconds", summary.textEncodeSeconds},
                     {"total_seconds", summary.finished.seconds}};
  json["policy"] = toString(summary.plan.chosen);
  json["policy_reason"] = summary.plan.reason;
  json["allocator_tuning"] = summary.allocatorTuning;
  json["decode_overlapped"] = summary.decodeOverlapped;
  json["dit_loads"] = summary.ditLoads;
  json["dit_load_seconds"] = summary.ditLoadSeconds;
  json["dit_offloads"] = summary.ditOffloads;
  json["plan"] = Json::parse(memory::planToJson(summary.plan));
  json["shots"] = Json::array();
  for (const ShotFinished& shot : summary.shots) json["shots"].push_back(shotToJson(shot, summary.resolved));
  json["cuts"] = Json::array();
  for (const continuity::CutMetrics& cut : summary.cuts) json["cuts"].push_back(cutMetricsToJson(cut));
  json["memory"] = Json::array();
  for (const auto& [cut, sample] : summary.memory) json["memory"].push_back(sampleToJson(cut, sample));
  json["warnings"] = Json::array();
  for (const RenderWarning& w : summary.warnings)
    json["warnings"].push_back({{"shot_index", w.shotIndex}, {"kind", w.kind}, {"message", w.message}});
  return json;
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csvValue(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string joined;
    for (const Json& item : value) {
      if (!joined.empty()) joined += ';';
      joined += csvValue(item);
    }
    return joined;
  }
  return value.dump();
}

void addRows(std::string& csv, const std::string& section, const std::string& index, const Json& object,
             const std::string& prefix = {}) {
  for (const auto& [field, value] : object.items()) {
    if (value.is_object()) {
      addRows(csv, section, index, value, prefix + field + ".");
      continue;
    }
    csv += csvField(section) + "," + csvField(index) + "," + csvField(prefix + field) + "," +
           csvField(csvValue(value)) + "\n";
  }
}

}  // namespace

std::string renderReportJson(const Sequence& sequence, const RenderSummary& summary) {
  return reportJson(sequence, summary).dump(2) + "\n";
}

std::string renderReportCsv(const Sequence& sequence, const RenderSummary& summary) {
  const Json json = reportJson(sequence, summary);
  std::string csv = "section,index,field,value\n";
  for (const char* key :
       {"sequence", "fps", "completed", "cancelled", "shots_rendered", "shots_reused", "policy", "policy_reason"})
    addRows(csv, "summary", "", Json{{key, json[key]}});
  addRows(csv, "timings", "", json["timings"]);
  addRows(csv, "plan", "", json["plan"]);
  for (const Json& shot : json["shots"]) addRows(csv, "shot", std::to_string(shot["index"].get<int>() + 1), shot);
  for (const Json& cut : json["cuts"])
    addRows(csv, "cut",
            std::to_string(cut["from_index"].get<int>() + 1) + "-" + std::to_string(cut["to_index"].get<int>() + 1),
            cut);
  int sampleIndex = 0;
  for (const Json& sample : json["memory"]) addRows(csv, "memory", std::to_string(sampleIndex++), sample);
  int warningIndex = 0;
  for (const Json& warning : json["warnings"]) addRows(csv, "warning", std::to_string(warningIndex++), warning);
  return csv;
}

void writeRenderReport(const std::filesystem::path& out, const Sequence& sequence, const RenderSummary& summary) {
  util::writeFileAtomically(out / "report.json", renderReportJson(sequence, summary));
  util::writeFileAtomically(out / "report.csv", renderReportCsv(sequence, summary));
}

}  // namespace shotchain::render
