#pragma once

#include <nlohmann/json_fwd.hpp>

#include "resolve/resolved_shot.h"

namespace shotchain::render {

// The settings a shot was rendered with, as the resolver decided them (the "resolved" object of shot.json
// and of each shot in report.json): what the document left to the sequence or the family, filled in.
nlohmann::ordered_json resolvedShotToJson(const resolve::ResolvedShot& shot);

}  // namespace shotchain::render
