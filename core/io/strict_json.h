#pragma once

// The one JSON reader for every JSON text ShotChain reads: sequence documents, safetensors headers,
// shard indexes (and importers later). The rules, the same everywhere:
// - exactly one JSON value; nothing but whitespace (space, tab, CR, LF) may follow it;
// - no NUL byte anywhere (the library would take one for the end of the text);
// - one UTF-8 byte-order mark at the very start is ignored; a second one, one outside a string, or
//   a UTF-16 BOM is refused;
// - at most `maxDepth` nested arrays/objects (the parse stops at the first deeper level, so deep
//   input cannot exhaust the stack);
// - no key twice in one object (the library would keep the last one silently);
// - every number fits a double (±1.8e308).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shotchain::io {

// Where a JSON text broke a rule: the JSON path ("shots[2].frames", empty for the whole text) and
// the rule, in words; line and column are part of `message` where they help.
struct JsonProblem {
  std::string path;
  std::string message;
};

class JsonRefused : public std::runtime_error {
 public:
  explicit JsonRefused(JsonProblem problem)
      : std::runtime_error(problem.path.empty() ? problem.message : problem.path + ": " + problem.message),
        problem_(std::move(problem)) {}
  const JsonProblem& problem() const { return problem_; }

 private:
  JsonProblem problem_;
};

// The nesting limit of every JSON text ShotChain reads: far beyond any real document or header.
inline constexpr int kMaxJsonDepth = 64;

// "line 3, column 7" of the byte at `offset`.
std::string lineAndColumn(std::string_view text, std::size_t offset);

// Parses `text` under the rules above; throws JsonRefused. Instantiated for nlohmann::json and
// nlohmann::ordered_json.
template <class Json>
Json parseJsonChecked(std::string_view text, int maxDepth);

// For core/io's readers: the same rules; throws SafetensorsError("<label>: <what>: <path>: <rule>").
nlohmann::json parseJsonStrict(std::string_view label, std::string_view what, std::string_view text, int maxDepth);

}  // namespace shotchain::io
