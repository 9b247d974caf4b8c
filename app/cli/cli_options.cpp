#include "cli/cli_options.h"

#include <algorithm>

#include "cli/option_values.h"
#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

std::vector<std::string> choices(const OptionSpec& spec) {
  std::vector<std::string> words;
  for (std::size_t start = 0; start <= spec.value.size();) {
    const std::size_t bar = std::min(spec.value.find('|', start), spec.value.size());
    words.push_back(spec.value.substr(start, bar - start));
    start = bar + 1;
  }
  return words;
}

std::string joined(const std::vector<std::string>& words, const char* separator) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : separator) + word;
  return text;
}

// "A-B" or "A": every part whole, 1-based, A ≤ B ("2x-4", "2-", "0-1", "3-2" are refused).
ShotRange parseRange(const OptionSpec& spec, const std::string& text) {
  const auto refuse = [&] {
    return std::invalid_argument(spec.name + ": " + quoted(text) + " is not a range like 2-4");
  };
  const std::size_t dash = text.find('-');
  ShotRange range;
  try {
    range.first = intOption(spec.name, text.substr(0, dash));
    range.last = dash == std::string::npos ? range.first : intOption(spec.name, text.substr(dash + 1));
  } catch (const std::invalid_argument&) {
    throw refuse();
  }
  if (range.first < 1 || range.last < range.first) throw refuse();
  return range;
}

Dimensions parseDimensions(const OptionSpec& spec, const std::string& text) {
  const std::size_t x = text.find('x');
  try {
    if (x != std::string::npos)
      return {int64Option(spec.name, text.substr(0, x)), int64Option(spec.name, text.substr(x + 1))};
  } catch (const std::invalid_argument&) {
  }
  throw std::invalid_argument(spec.name + ": " + quoted(text) + " is not a size like 832x480");
}

ParsedOptions::Value parseValue(const OptionSpec& spec, const std::string& text) {
  switch (spec.kind) {
    case OptionKind::Flag:
      return true;
    case OptionKind::Int:
      return static_cast<std::int64_t>(intOption(spec.name, text));
    case OptionKind::Int64:
      return int64Option(spec.name, text);
    case OptionKind::Double:
      return doubleOption(spec.name, text);
    case OptionKind::Text:
      return text;
    case OptionKind::Path:
      if (text.empty()) throw std::invalid_argument(spec.name + ": the path is empty");
      return text;
    case OptionKind::ByteSize:
      if (const std::optional<std::uint64_t> bytes = util::parseByteSize(text)) {
        if (*bytes < spec.minBytes)
          throw std::invalid_argument(spec.name + ": " + util::formatByteSize(*bytes) + " is below the smallest of " +
                                      util::formatByteSize(spec.minBytes));
        return *bytes;
      }
      throw std::invalid_argument(spec.name + ": " + quoted(text) + " is not a size (e.g. 16GiB)");
    case OptionKind::Range:
      return parseRange(spec, text);
    case OptionKind::Dimensions:
      return parseDimensions(spec, text);
    case OptionKind::Choice: {
      const std::vector<std::string> words = choices(spec);
      if (std::find(words.begin(), words.end(), text) != words.end()) return text;
      throw std::invalid_argument(spec.name + ": " + quoted(text) + " is not one of " + joined(words, ", "));
    }
  }
  throw std::logic_error(spec.name + ": unknown option kind");
}

std::string optionUsage(const OptionSpec& spec) {
  return spec.kind == OptionKind::Flag ? spec.name : spec.name + " " + spec.value;
}

}  // namespace

std::string wrapText(const std::string& text, std::size_t width, const std::string& indent) {
  std::string wrapped;
  std::size_t column = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", start), text.size());
    const std::string word = text.substr(start, end - start);
    if (column > indent.size() && column + 1 + word.size() > width) {
      wrapped += "\n" + indent;
      column = indent.size();
    } else if (start > 0 && text[start - 1] == ' ') {
      wrapped += ' ';
      ++column;
    }
    wrapped += word;
    column += word.size();
    if (end < text.size() && text[end] == '\n') {
      wrapped += "\n" + indent;
      column = indent.size();
    }
    start = end + 1;
  }
  return wrapped;
}

const ParsedOptions::Value* ParsedOptions::find(const std::string& name,
                                                std::initializer_list<OptionKind> kinds) const {
  const OptionSpec* spec = spec_ ? spec_->option(name) : nullptr;
  if (!spec || std::find(kinds.begin(), kinds.end(), spec->kind) == kinds.end())
    throw std::logic_error((spec_ ? spec_->name : std::string("?")) + ": no option " + name +
                           " of that kind in its table");
  const auto found = values_.find(name);
  return found == values_.end() ? nullptr : &found->second;
}

bool ParsedOptions::flag(const std::string& name) const { return find(name, {OptionKind::Flag}) != nullptr; }

std::optional<int> ParsedOptions::integer(const std::string& name) const {
  const std::optional<std::int64_t> value = get<std::int64_t>(name, {OptionKind::Int});  // parsed as an int
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

std::optional<std::int64_t> ParsedOptions::int64(const std::string& name) const {
  return get<std::int64_t>(name, {OptionKind::Int64});
}

std::optional<double> ParsedOptions::number(const std::string& name) const {
  return get<double>(name, {OptionKind::Double});
}

std::optional<std::string> ParsedOptions::text(const std::string& name) const {
  return get<std::string>(name, {OptionKind::Text, OptionKind::Path, OptionKind::Choice});
}

std::optional<std::uint64_t> ParsedOptions::byteSize(const std::string& name) const {
  return get<std::uint64_t>(name, {OptionKind::ByteSize});
}

std::optional<ShotRange> ParsedOptions::range(const std::string& name) const {
  return get<ShotRange>(name, {OptionKind::Range});
}

std::optional<Dimensions> ParsedOptions::dimensions(const std::string& name) const {
  return get<Dimensions>(name, {OptionKind::Dimensions});
}

const OptionSpec* CommandSpec::option(const std::string& optionName) const {
  for (const OptionSpec& spec : options)
    if (spec.name == optionName) return &spec;
  return nullptr;
}

ParsedOptions CommandSpec::parse(const Args& args, std::size_t first) const {
  ParsedOptions parsed;
  parsed.spec_ = this;
  bool optionsEnded = false;
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (optionsEnded || arg.size() < 2 || arg[0] != '-') {
      if (maxOperands >= 0 && parsed.operands_.size() >= static_cast<std::size_t>(maxOperands))
        throw error("unexpected " + quoted(arg) +
                    (operands.empty() ? " (it takes no operands)" : " (it takes " + operands + ")"));
      parsed.operands_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsEnded = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") throw HelpRequested(name);
    const OptionSpec* spec = option(arg);
    if (!spec) throw error("unknown option " + quoted(arg) + " (shotchain " + name + " --help lists them)");
    if (spec->kind == OptionKind::Flag) {
      parsed.values_[spec->name] = true;
      continue;
    }
    if (i + 1 >= args.size()) throw error(spec->name + " needs a value (" + spec->value + ")");
    try {
      parsed.values_[spec->name] = parseValue(*spec, args[++i]);
    } catch (const std::invalid_argument& bad) {
      throw error(bad.what());
    }
  }
  if (parsed.operands_.size() < static_cast<std::size_t>(minOperands)) throw error("missing " + operands);
  for (const OptionSpec& spec : options)
    if (!spec.fallback.empty() && !parsed.values_.contains(spec.name))
      parsed.values_[spec.name] = parseValue(spec, spec.fallback);
  return parsed;
}

std::string CommandSpec::synopsis(std::size_t width, const std::string& prefix) const {
  // Each operand and option is one word of the wrap: a non-breaking stand-in for its spaces.
  std::string words = prefix + name;
  const auto add = [&words](std::string word) {
    std::replace(word.begin(), word.end(), ' ', '\x1f');
    words += " " + word;
  };
  if (!operands.empty()) add(operands);
  for (const OptionSpec& spec : options) add("[" + optionUsage(spec) + "]");
  std::string text = wrapText(words, width, std::string(prefix.size() + name.size() + 1, ' '));
  std::replace(text.begin(), text.end(), '\x1f', ' ');
  return text;
}

std::string CommandSpec::help() const {
  std::string text = synopsis(100, "usage: shotchain ") + "\n\n" + wrapText(summary, 100, "") + "\n";
  if (!options.empty()) text += "\n";
  std::size_t column = 0;
  for (const OptionSpec& spec : options) column = std::max(column, optionUsage(spec).size());
  for (const OptionSpec& spec : options) {
    const std::string usage = optionUsage(spec);
    const std::string line = "  " + usage + std::string(column - usage.size() + 2, ' ') + spec.help +
                             (spec.fallback.empty() ? "" : " (default " + spec.fallback + ")");
    text += wrapText(line, 100, std::string(column + 4, ' ')) + "\n";
  }
  if (!notes.empty()) text += "\n" + wrapText(notes, 100, "") + "\n";
  return text;
}

}  // namespace shotchain::cli
