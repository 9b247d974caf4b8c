#include "io/strict_json.h"

#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "io/safetensors_header.h"

namespace shotchain::io {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// Keys are user text: a path stays readable even when a key is huge.
std::string shortened(const std::string& text, std::size_t limit = 40) {
  return text.size() <= limit ? text : text.substr(0, limit) + "…";
}

// The JSON path of the value being parsed, kept up to date from the parser's events.
class PathTracker {
 public:
  explicit PathTracker(int maxDepth) : maxDepth_(maxDepth) {}

  void scalar() { valueDone(); }
  void beginContainer(bool isObject) {
    if (!levels_.empty() && !levels_.back().isObject) ++levels_.back().index;
    if (static_cast<int>(levels_.size()) >= maxDepth_)
      throw JsonRefused({path(), "JSON nested deeper than " + std::to_string(maxDepth_) +
                                     " levels of arrays and objects (refused before reading further)"});
    Level level;
    level.isObject = isObject;
    levels_.push_back(std::move(level));
  }
  void endContainer() {
    if (!levels_.empty()) levels_.pop_back();
    if (!levels_.empty() && levels_.back().isObject) levels_.back().betweenMembers = true;
  }
  void key(const std::string& name) {
    if (levels_.empty()) return;
    Level& level = levels_.back();
    level.key = name;
    level.betweenMembers = false;
    if (!level.keys.insert(name).second)
      throw JsonRefused(
          {path(), "duplicate key \"" + shortened(name) +
                       "\": a key may appear once in an object (the second would silently replace the first)"});
  }

  // The path of what is being read. `failed`: the parser stopped inside a value it had not finished,
  // so in an array that is the element after the last complete one.
  std::string path(bool failed = false) const {
    std::string text;
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      const Level& level = levels_[i];
      const bool last = i + 1 == levels_.size();
      if (level.isObject) {
        if (level.key.empty() && level.keys.empty()) break;
        if (last && level.betweenMembers) break;
        if (!text.empty()) text += '.';
        text += shortened(level.key);
      } else {
        const long index = level.index + (last && failed ? 1 : 0);
        if (index < 0) break;
        text += "[" + std::to_string(index) + "]";
      }
    }
    return text;
  }

 private:
  struct Level {
    bool isObject = false;
    std::string key;
    bool betweenMembers = true;
    long index = -1;
    std::set<std::string> keys;
  };
  void valueDone() {
    if (levels_.empty()) return;
    Level& parent = levels_.back();
    if (parent.isObject)
      parent.betweenMembers = true;
    else
      ++parent.index;
  }

  int maxDepth_;
  std::vector<Level> levels_;
};

// nlohmann's message without its "[json.exception...] parse error at line 1, column 5: " prefix.
std::string syntaxDetail(const std::exception& error) {
  std::string detail = error.what();
  if (auto pos = detail.find("syntax error"); pos != std::string::npos) return detail.substr(pos);
  if (auto pos = detail.find("] "); pos != std::string::npos) return detail.substr(pos + 2);
  return detail;
}

void checkBytes(std::string_view text) {
  if (text.size() >= 2 && ((text[0] == '\xFE' && text[1] == '\xFF') || (text[0] == '\xFF' && text[1] == '\xFE')))
    throw JsonRefused({"", "the text is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8"});
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw JsonRefused(
        {"", lineAndColumn(text, nul) +
                 ": not valid JSON: contains a NUL byte (nothing but whitespace may follow the JSON value)"});
  // Outside strings the parser refuses a stray BOM as a syntax error; a second one where the text
  // begins gets its own words. (Inside a string, U+FEFF is just text.)
  const std::size_t start = text.substr(0, kUtf8Bom.size()) == kUtf8Bom ? kUtf8Bom.size() : 0;
  const std::size_t first = std::min(text.find_first_not_of(" \t\r\n", start), text.size());
  if (text.substr(first, kUtf8Bom.size()) == kUtf8Bom)
    throw JsonRefused({"", lineAndColumn(text, first) +
                               ": not valid JSON: a byte-order mark is allowed only at the very start of the text"});
}

}  // namespace

std::string lineAndColumn(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// nlohmann's SAX-to-DOM builder with the tracker's rules applied on the way. (The library's
// callback parser rescans an object's members at the end of every child object: quadratic.)
template <class Json>
class CheckedSax {
 public:
  CheckedSax(Json& root, PathTracker& tracker) : dom_(root, true), tracker_(tracker) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(typename Json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
  bool number_float(typename Json::number_float_t v, const typename Json::string_t& text) {
    return scalar(dom_.number_float(v, text));
  }
  bool string(typename Json::string_t& v) { return scalar(dom_.string(v)); }
  bool binary(typename Json::binary_t& v) { return scalar(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    tracker_.beginContainer(true);
    return dom_.start_object(n);
  }
  bool key(typename Json::string_t& name) {
    tracker_.key(name);
    return dom_.key(name);
  }
  bool end_object() {
    const bool ok = dom_.end_object();
    tracker_.endContainer();
    return ok;
  }
  bool start_array(std::size_t n) {
    tracker_.beginContainer(false);
    return dom_.start_array(n);
  }
  bool end_array() {
    const bool ok = dom_.end_array();
    tracker_.endContainer();
    return ok;
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);  // throws `error`
  }

 private:
  bool scalar(bool ok) {
    tracker_.scalar();
    return ok;
  }
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  PathTracker& tracker_;
};

template <class Json>
Json parseJsonChecked(std::string_view text, int maxDepth) {
  checkBytes(text);
  PathTracker tracker(maxDepth);
  Json root;
  CheckedSax<Json> sax(root, tracker);
  try {
    Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
    return root;
  } catch (const nlohmann::json::parse_error& error) {
    const std::size_t offset = error.byte > 0 ? error.byte - 1 : 0;
    const std::string_view what = error.what();
    if (what.find("; expected end of input") != std::string_view::npos)
      throw JsonRefused({"", lineAndColumn(text, offset) +
                                 ": not valid JSON: something other than whitespace follows the JSON value"});
    if (error.byte >= text.size() || what.find("unexpected end of input") != std::string_view::npos)
      throw JsonRefused(
          {tracker.path(true), lineAndColumn(text, offset) +
                                   ": not valid JSON: the text ends in the middle of the JSON value (truncated?)"});
    throw JsonRefused({tracker.path(true), lineAndColumn(text, offset) + ": not valid JSON: " + syntaxDetail(error)});
  } catch (const nlohmann::json::out_of_range& error) {
    if (error.id == 406) throw JsonRefused({tracker.path(true), "a number too large for any field (beyond ±1.8e308)"});
    throw JsonRefused({tracker.path(true), "not valid JSON: " + syntaxDetail(error)});
  } catch (const nlohmann::json::exception& error) {
    throw JsonRefused({tracker.path(true), "not valid JSON: " + syntaxDetail(error)});
  }
}

template nlohmann::json parseJsonChecked<nlohmann::json>(std::string_view, int);
template nlohmann::ordered_json parseJsonChecked<nlohmann::ordered_json>(std::string_view, int);

nlohmann::json parseJsonStrict(std::string_view label, std::string_view what, std::string_view text, int maxDepth) {
  try {
    return parseJsonChecked<nlohmann::json>(text, maxDepth);
  } catch (const JsonRefused& refused) {
    throw SafetensorsError(std::string(label) + ": " + std::string(what) + ": " + refused.what());
  }
}

}  // namespace shotchain::io
