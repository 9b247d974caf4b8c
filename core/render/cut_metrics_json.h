#pragma once

#include <nlohmann/json_fwd.hpp>

#include "continuity/cut_metrics.h"

namespace shotchain::render {

// JSON form of a cut's figures (report.json, shot.json). Infinite PSNR is written as the string
// "inf" (JSON has no infinity); figures that are nullopt are written as null.
nlohmann::ordered_json cutMetricsToJson(const continuity::CutMetrics& cut);
continuity::CutMetrics cutMetricsFromJson(const nlohmann::ordered_json& json);

}  // namespace shotchain::render
