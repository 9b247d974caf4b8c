#include "render/shot_record.h"

#include <fstream>
#include <iterator>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "io/safetensors_writer.h"
#include "io/strict_json.h"
#include "io/weight_set.h"
#include "render/cut_metrics_json.h"
#include "render/output_layout.h"
#include "render/stream_figures_json.h"
#include "util/atomic_file.h"
#include "util/bounded_file.h"

namespace shotchain::render {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kRecordFormat = "shotchain.shot/1";
constexpr const char* kTailFormat = "shotchain-shot-tail-v1";

}  // namespace

void writeShotRecord(const std::filesystem::path& shotDir, const ShotRecord& record) {
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
  std::filesystem::create_directories(shotDir);
  util::writeFileAtomically(shotRecordPath(shotDir), json.dump(2) + "\n");
}

std::optional<ShotRecord> readShotRecord(const std::filesystem::path& shotDir) {
  if (!util::regularFileProblem(shotRecordPath(shotDir), 16u << 20).empty()) return std::nullopt;  // rendered again
  std::string text;
  try {
    text = util::readRegularFile(shotRecordPath(shotDir), 16u << 20);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
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
    return record;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  } catch (const io::JsonRefused&) {
    return std::nullopt;
  }
}

void writeShotTail(const std::filesystem::path& shotDir, const ShotTail& tail) {
  std::filesystem::create_directories(shotDir);
  io::saveSafetensors(tailLatentPath(shotDir),
                      {{"tail_latent", tail.latent.to(at::kCPU, at::kFloat).contiguous()},
                       {"last_frame", tail.lastFrame.to(at::kCPU, at::kFloat).contiguous()}},
                      {{"format", kTailFormat}, {"key", tail.key}});
}

std::optional<ShotTail> readShotTail(const std::filesystem::path& shotDir, c10::Device device) {
  const std::filesystem::path path = tailLatentPath(shotDir);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  try {
    const io::WeightSet weights = io::WeightSet::open(path);
    const auto& metadata = weights.metadata();
    const auto format = metadata.find("format");
    if (format == metadata.end() || format->second != kTailFormat) return std::nullopt;
    ShotTail tail;
    tail.latent = weights.load("tail_latent", at::kFloat).to(device).clone();
    tail.lastFrame = weights.load("last_frame", at::kFloat).to(device).clone();
    const auto key = metadata.find("key");
    tail.key = key == metadata.end() ? std::string() : key->second;
    return tail;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool shotTailPresent(const std::filesystem::path& shotDir) {
  std::error_code error;
  if (!std::filesystem::exists(tailLatentPath(shotDir), error)) return false;
  try {
    const io::WeightSet weights = io::WeightSet::open(tailLatentPath(shotDir));
    const auto format = weights.metadata().find("format");
    return format != weights.metadata().end() && format->second == kTailFormat &&
           weights.find("tail_latent") != nullptr && weights.find("last_frame") != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

bool framesComplete(const std::filesystem::path& shotDir, int count) {
  std::error_code error;
  for (int i = 0; i < count; ++i)
    if (!std::filesystem::is_regular_file(framePath(shotDir, i), error)) return false;
  return count > 0;
}

}  // namespace shotchain::render
