#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace shotchain::cli {

using Args = std::vector<std::string>;

// What an option takes. Numbers are parsed whole (option_values.h): "12k" is not 12.
enum class OptionKind {
  Flag,        // no value
  Int,         // a whole number that fits an int
  Int64,       // a whole number
  Double,      // a finite number
  Text,        // any text
  Path,        // a file or folder, not empty
  ByteSize,    // "16GiB", "16GB", "512M" (util/byte_size.h)
  Range,       // "A-B" or "A", 1-based, A ≤ B
  Dimensions,  // "WxH", two whole numbers
  Choice,      // one of the words of `value`, written "a|b|c"
};

struct OptionSpec {
  std::string name;  // "--shots"
  OptionKind kind;
  std::string value;  // what the usage shows after the name ("A-B"); for a Choice the words, "a|b|c"
  std::string help;   // one line: what it does
  // The value when the option is not given, parsed like a given one and shown in the help; empty:
  // none (the getter returns nothing; a default that is not the CLI's own is named in `help`).
  std::string fallback = {};
  std::uint64_t minBytes = 0;  // ByteSize: a smaller value is a usage error
};

struct ShotRange {
  int first = 1;  // 1-based, inclusive
  int last = 1;
};

struct Dimensions {
  std::int64_t width = 0;
  std::int64_t height = 0;
};

// A command line the user got wrong: the message names the option and the text. `shotchain` prints
// it with the command's usage and exits 2.
class UsageError : public std::invalid_argument {
 public:
  UsageError(std::string command, const std::string& message)
      : std::invalid_argument(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

// --help or -h where an option may stand: `shotchain` prints the command's help and exits 0.
class HelpRequested : public std::exception {
 public:
  explicit HelpRequested(std::string command) : command_(std::move(command)) {}
  const std::string& command() const { return command_; }
  const char* what() const noexcept override { return "help requested"; }

 private:
  std::string command_;
};

class CommandSpec;

// `text` broken at spaces into lines of at most `width` columns (a longer word stands alone), every
// line after the first starting with `indent`; its own line breaks are kept.
std::string wrapText(const std::string& text, std::size_t width, const std::string& indent);

// What a command line said, by the names of its CommandSpec's options. Asking for a name the table
// does not have, or with a getter of another kind, is a programming error (std::logic_error).
class ParsedOptions {
 public:
  using Value = std::variant<bool, std::int64_t, double, std::string, std::uint64_t, ShotRange, Dimensions>;

  bool flag(const std::string& name) const;
  std::optional<int> integer(const std::string& name) const;         // Int
  std::optional<std::int64_t> int64(const std::string& name) const;  // Int64
  std::optional<double> number(const std::string& name) const;       // Double
  std::optional<std::string> text(const std::string& name) const;    // Text, Path, Choice
  std::optional<std::uint64_t> byteSize(const std::string& name) const;
  std::optional<ShotRange> range(const std::string& name) const;
  std::optional<Dimensions> dimensions(const std::string& name) const;
  const std::vector<std::string>& operands() const { return operands_; }

 private:
  friend class CommandSpec;
  const Value* find(const std::string& name, std::initializer_list<OptionKind> kinds) const;
  template <class T>
  std::optional<T> get(const std::string& name, std::initializer_list<OptionKind> kinds) const {
    const Value* value = find(name, kinds);
    return value ? std::optional<T>(std::get<T>(*value)) : std::nullopt;
  }

  const CommandSpec* spec_ = nullptr;
  std::map<std::string, Value> values_;
  std::vector<std::string> operands_;
};

// One command's declarative option table: it parses the command line and writes the usage, so the
// two cannot drift. `name` is the verb, or "verb sub" ("bench vae": the table parses what follows
// "vae"). Operands are the arguments that are not options; "--" ends the options.
class CommandSpec {
 public:
  std::string name;      // "render", "bench vae"
  std::string operands;  // how the usage shows them: "SEQUENCE", "FILE...", "[WEIGHTS] IO"
  int minOperands = 0;
  int maxOperands = 0;  // −1: any number
  std::string summary;  // what the command does, one or two sentences
  std::vector<OptionSpec> options;
  std::string notes;  // more lines for `--help`, after the options

  // Throws UsageError (unknown option, missing or bad value, wrong operand count) or HelpRequested.
  ParsedOptions parse(const Args& args, std::size_t first = 0) const;

  // "shotchain render SEQUENCE [--out DIR] …" (`prefix` + name + …), wrapped below `width` columns.
  std::string synopsis(std::size_t width = 100, const std::string& prefix = "shotchain ") const;
  // The synopsis, the summary and one line per option.
  std::string help() const;
  const OptionSpec* option(const std::string& name) const;
  std::string verb() const { return name.substr(0, name.find(' ')); }

  UsageError error(const std::string& message) const { return UsageError(name, message); }
};

}  // namespace shotchain::cli
