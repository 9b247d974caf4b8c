#include "render/cut_metrics_json.h"

#include <array>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "continuity/cut_verdict.h"

namespace shotchain::render {
namespace {

using Json = nlohmann::ordered_json;

Json number(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return nullptr;
  return value;
}

Json optionalNumber(const std::optional<double>& value) { return value ? number(*value) : Json(nullptr); }

std::optional<double> readOptional(const Json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    const std::string text = it->get<std::string>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    return std::nullopt;
  }
  return it->get<double>();
}

using continuity::CutMetrics;

// Every figure by its JSON key (also the CSV field name), in report order.
constexpr std::array<std::pair<const char*, std::optional<double> CutMetrics::*>, 14> kOptionalFields{{
    {"handoff_mse", &CutMetrics::handoffMse},
    {"latent_step_ratio", &CutMetrics::latentStepRatio},
    {"psnr_cut_db", &CutMetrics::psnrCut},
    {"ssim_cut", &CutMetrics::ssimCut},
    {"psnr_within_median_db", &CutMetrics::psnrWithinMedian},
    {"ssim_within_median", &CutMetrics::ssimWithinMedian},
    {"mad_ratio", &CutMetrics::madRatio},
    {"delta_e_prev", &CutMetrics::deltaEPrev},
    {"delta_e_first", &CutMetrics::deltaEFirst},
    {"roundtrip_mse", &CutMetrics::roundtripMse},
    {"flash_ratio", &CutMetrics::flash},
    {"colour_drift_delta_e", &CutMetrics::colourDrift},
    {"spread_drift_delta_e", &CutMetrics::spreadDrift},
    {"structure_ratio", &CutMetrics::structure},
}};

constexpr std::array<std::pair<const char*, std::vector<double> CutMetrics::*>, 4> kVectorFields{{
    {"channel_mean_delta_prev", &CutMetrics::channelMeanDeltaPrev},
    {"channel_log_std_delta_prev", &CutMetrics::channelLogStdDeltaPrev},
    {"channel_mean_delta_first", &CutMetrics::channelMeanDeltaFirst},
    {"channel_log_std_delta_first", &CutMetrics::channelLogStdDeltaFirst},
}};

constexpr std::array<std::pair<const char*, double CutMetrics::*>, 5> kNumberFields{{
    {"handoff_seconds", &CutMetrics::handoffSeconds},
    {"mean_abs_channel_mean_delta_prev", &CutMetrics::meanAbsChannelMeanDeltaPrev},
    {"mean_abs_channel_log_std_delta_prev", &CutMetrics::meanAbsChannelLogStdDeltaPrev},
    {"mean_abs_channel_mean_delta_first", &CutMetrics::meanAbsChannelMeanDeltaFirst},
    {"mean_abs_channel_log_std_delta_first", &CutMetrics::meanAbsChannelLogStdDeltaFirst},
}};

}  // namespace

Json cutMetricsToJson(const continuity::CutMetrics& cut) {
  Json json;
  json["from_index"] = cut.fromIndex;
  json["to_index"] = cut.toIndex;
  json["from_shot"] = cut.fromShotId;
  json["to_shot"] = cut.toShotId;
  json["from_key"] = cut.fromKey;
  json["to_key"] = cut.toKey;
  json["mode"] = cut.mode;
  json["source"] = cut.source;
  json["resampled"] = cut.resampled;
  json["handoff_bytes_copied"] = cut.handoffBytesCopied;
  for (const auto& [key, field] : kNumberFields) json[key] = number(cut.*field);
  for (const auto& [key, field] : kOptionalFields) json[key] = optionalNumber(cut.*field);
  for (const auto& [key, field] : kVectorFields) json[key] = cut.*field;
  json["after_cut_frames"] = cut.afterCutFrames;
  json["verdict"] = continuity::judgeCut(cut).summary;
  return json;
}

continuity::CutMetrics cutMetricsFromJson(const Json& json) {
  continuity::CutMetrics cut;
  cut.fromIndex = json.value("from_index", 0);
  cut.toIndex = json.value("to_index", 1);
  cut.fromShotId = json.value("from_shot", std::string());
  cut.toShotId = json.value("to_shot", std::string());
  cut.fromKey = json.value("from_key", std::string());
  cut.toKey = json.value("to_key", std::string());
  cut.mode = json.value("mode", std::string());
  cut.source = json.value("source", std::string());
  cut.resampled = json.value("resampled", false);
  cut.handoffBytesCopied = json.value("handoff_bytes_copied", std::uint64_t{0});
  cut.afterCutFrames = json.value("after_cut_frames", 0);
  for (const auto& [key, field] : kNumberFields) cut.*field = readOptional(json, key).value_or(0.0);
  for (const auto& [key, field] : kOptionalFields) cut.*field = readOptional(json, key);
  for (const auto& [key, field] : kVectorFields)
    if (json.contains(key) && json[key].is_array()) cut.*field = json[key].get<std::vector<double>>();
  return cut;
}

Json keyframeLandingsToJson(const std::vector<continuity::KeyframeLanding>& landings) {
  Json out = Json::array();
  for (const continuity::KeyframeLanding& l : landings)
    out.push_back({{"end", l.end},
                   {"psnr", number(l.psnr)},
                   {"ssim", number(l.ssim)},
                   {"delta_e", number(l.deltaE)},
                   {"missed", l.missed}});
  return out;
}

std::vector<continuity::KeyframeLanding> keyframeLandingsFromJson(const Json& json) {
  std::vector<continuity::KeyframeLanding> out;
  for (const Json& item : json) {
    if (!item.is_object()) continue;
    continuity::KeyframeLanding& l = out.emplace_back();
    l.end = item.value("end", std::string());
    l.psnr = readOptional(item, "psnr").value_or(0.0);
    l.ssim = readOptional(item, "ssim").value_or(0.0);
    l.deltaE = readOptional(item, "delta_e").value_or(0.0);
    l.missed = item.value("missed", false);
  }
  return out;
}

}  // namespace shotchain::render
