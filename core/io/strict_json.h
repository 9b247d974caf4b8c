#pragma once

// Internal to core/io: JSON parsing that rejects duplicate keys and deep nesting.
#include <string_view>

#include <nlohmann/json.hpp>

namespace shotchain::io {

// Throws SafetensorsError("<label>: <what>: ...") for invalid JSON, duplicate keys at any level,
// or nesting deeper than maxDepth.
nlohmann::json parseJsonStrict(std::string_view label, std::string_view what, std::string_view text, int maxDepth);

}  // namespace shotchain::io
