#include "io/strict_json.h"

#include <set>
#include <string>
#include <vector>

#include "io/safetensors_header.h"

namespace shotchain::io {

nlohmann::json parseJsonStrict(std::string_view label, std::string_view what, std::string_view text, int maxDepth) {
  using Json = nlohmann::json;
  const std::string prefix = std::string(label) + ": " + std::string(what) + ": ";
  std::vector<std::set<std::string>> keysPerObject;
  int depth = 0;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (++depth > maxDepth) throw SafetensorsError(prefix + "JSON nested deeper than " + std::to_string(maxDepth) + " levels");
        if (event == Json::parse_event_t::object_start) keysPerObject.emplace_back();
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        --depth;
        if (event == Json::parse_event_t::object_end && !keysPerObject.empty()) keysPerObject.pop_back();
        break;
      case Json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!keysPerObject.empty() && !keysPerObject.back().insert(key).second)
          throw SafetensorsError(prefix + "duplicate key \"" + key + "\"");
        break;
      }
      case Json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const Json::exception& error) {
    throw SafetensorsError(prefix + "not valid JSON: " + error.what());
  }
}

}  // namespace shotchain::io
