#pragma once

#include <nlohmann/json.hpp>

#include "render/render_events.h"

namespace shotchain::render {

// The "stream" object of shot.json and of the report's shots.
nlohmann::ordered_json streamFiguresToJson(const StreamFigures& figures);
StreamFigures streamFiguresFromJson(const nlohmann::ordered_json& json);
// The "cache" object of shot.json and of the report's shots.
nlohmann::ordered_json stepCacheFiguresToJson(const StepCacheFigures& figures);
StepCacheFigures stepCacheFiguresFromJson(const nlohmann::ordered_json& json);
// The "loras" object.
nlohmann::ordered_json loraFiguresToJson(const LoraFigures& figures);
LoraFigures loraFiguresFromJson(const nlohmann::ordered_json& json);
nlohmann::ordered_json fewStepFiguresToJson(const FewStepFigures& figures);
FewStepFigures fewStepFiguresFromJson(const nlohmann::ordered_json& json);
// The "experts" object (two-expert sampling).
nlohmann::ordered_json expertFiguresToJson(const ExpertFigures& figures);
ExpertFigures expertFiguresFromJson(const nlohmann::ordered_json& json);

}  // namespace shotchain::render
