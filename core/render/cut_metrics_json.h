#pragma once

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "continuity/cut_metrics.h"
#include "continuity/keyframe_landing.h"

namespace shotchain::render {

// JSON form of a cut's figures (report.json, shot.json). Infinite PSNR is written as the string
// "inf" (JSON has no infinity); figures that are nullopt are written as null.
nlohmann::ordered_json cutMetricsToJson(const continuity::CutMetrics& cut);
continuity::CutMetrics cutMetricsFromJson(const nlohmann::ordered_json& json);
// The "keyframes" array of a shot: how close it came to its start and end pictures (PSNR written as above).
nlohmann::ordered_json keyframeLandingsToJson(const std::vector<continuity::KeyframeLanding>& landings);
std::vector<continuity::KeyframeLanding> keyframeLandingsFromJson(const nlohmann::ordered_json& json);

}  // namespace shotchain::render
