#pragma once

#include <nlohmann/json.hpp>

#include "render/render_events.h"

namespace shotchain::render {

// The "stream" object of shot.json and of the report's shots.
nlohmann::ordered_json streamFiguresToJson(const StreamFigures& figures);
StreamFigures streamFiguresFromJson(const nlohmann::ordered_json& json);

}  // namespace shotchain::render
