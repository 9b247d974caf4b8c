#include "render/shot_record_json.h"

#include <nlohmann/json.hpp>

#include "io/strict_json.h"
#include "render/cut_metrics_json.h"
#include "render/stream_figures_json.h"

namespace shotchain::render {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kRecordFormat = "shotchain.shot/1";

}  // namespace

std::string shotRecordText(const ShotRecord& record) {
  Json json;
  json["format"] = kRecordFormat;
  json["index"] = record.index;
  json["id"] = record.id;
  json["name"] = record.name;
  json["key"] = record.key;
  json["settings"] = Json::parse(record.settingsJson);
  json["resolved"] = record.resolvedJson.empty() ? Json(nullptr) : Json::parse(record.resolvedJson);
  json["frames_written"] = record.framesWritten;
  json["frames_dropped"] = record.framesDropped;
  json["conditioned_on"] = record.conditionedOn;
  json["timings"] = {{"sample_seconds", record.sampleSeconds},
                     {"decode_seconds", record.decodeSeconds},
                     {"seconds", record.seconds},
                     {"first_frame_seconds", record.firstFrameSeconds},
                     {"step_seconds", record.stepSeconds}};
  if (record.stream) json["stream"] = streamFiguresToJson(*record.stream);
  if (record.cache) json["cache"] = stepCacheFiguresToJson(*record.cache);
  if (record.loras) json["loras"] = loraFiguresToJson(*record.loras);
  if (record.fewStep) json["few_step"] = fewStepFiguresToJson(*record.fewStep);
  if (record.experts) json["experts"] = expertFiguresToJson(*record.experts);
  json["cut_in"] = record.cutIn ? cutMetricsToJson(*record.cutIn) : Json(nullptr);
  if (!record.keyframes.empty()) json["keyframes"] = keyframeLandingsToJson(record.keyframes);
  json["stats"] = record.statsJson.empty() ? Json(nullptr) : Json::parse(record.statsJson);
  json["fallbacks"] = record.fallbacks;
  if (!record.tailDigest.empty()) json["digests"] = {{"tail", record.tailDigest}, {"frames", record.frameDigests}};
  return json.dump(2) + "\n";
}

std::optional<ShotRecord> parseShotRecord(std::string_view text) {
  try {
    const Json json = io::parseJsonChecked<Json>(text, 64);  // a damaged record is rendered again, never a crash
    if (json.value("format", std::string()) != kRecordFormat) return std::nullopt;
    ShotRecord record;
    record.index = json.at("index").get<int>();
    record.id = json.at("id").get<std::string>();
    record.name = json.value("name", std::string());
    record.key = json.at("key").get<std::string>();
    record.settingsJson = json.at("settings").dump();
    if (json.contains("resolved") && json["resolved"].is_object()) record.resolvedJson = json["resolved"].dump();
    record.framesWritten = json.at("frames_written").get<int>();
    record.framesDropped = json.value("frames_dropped", 0);
    record.conditionedOn = json.value("conditioned_on", std::string());
    const Json& timings = json.at("timings");
    record.sampleSeconds = timings.value("sample_seconds", 0.0);
    record.decodeSeconds = timings.value("decode_seconds", 0.0);
    record.seconds = timings.value("seconds", 0.0);
    record.stepSeconds = timings.value("step_seconds", std::vector<double>());
    record.firstFrameSeconds = timings.value("first_frame_seconds", 0.0);
    if (json.contains("stream") && json["stream"].is_object()) record.stream = streamFiguresFromJson(json["stream"]);
    if (json.contains("cache") && json["cache"].is_object()) record.cache = stepCacheFiguresFromJson(json["cache"]);
    if (json.contains("loras") && json["loras"].is_object()) record.loras = loraFiguresFromJson(json["loras"]);
    if (json.contains("few_step") && json["few_step"].is_object())
      record.fewStep = fewStepFiguresFromJson(json["few_step"]);
    if (json.contains("experts") && json["experts"].is_object())
      record.experts = expertFiguresFromJson(json["experts"]);
    if (json.contains("cut_in") && !json["cut_in"].is_null()) record.cutIn = cutMetricsFromJson(json["cut_in"]);
    if (json.contains("keyframes") && json["keyframes"].is_array())
      record.keyframes = keyframeLandingsFromJson(json["keyframes"]);
    if (json.contains("stats") && !json["stats"].is_null()) record.statsJson = json["stats"].dump();
    record.fallbacks = json.value("fallbacks", std::vector<std::string>());
    if (json.contains("digests") && json["digests"].is_object()) {
      record.tailDigest = json["digests"].value("tail", std::string());
      record.frameDigests = json["digests"].value("frames", std::vector<std::string>());
    }
    return record;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  } catch (const io::JsonRefused&) {
    return std::nullopt;
  }
}

}  // namespace shotchain::render
