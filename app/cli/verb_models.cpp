#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "models/model_catalogue.h"
#include "models/model_family.h"
#include "models/model_files.h"
#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

// A file name as a terminal line may hold it: control characters (a newline, an escape sequence) written as
// \n, \t, \xHH so that a name can neither split a row nor colour the terminal; the rest as it is.
std::string printable(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\\')
      out += "\\\\";
    else if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

// Whether `text` is valid UTF-8 (else JSON can only show it with U+FFFD, naming no file): the JSON writer's own check.
bool validUtf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

std::string hexBytes(const std::string& text) {
  std::string out;
  for (const char c : text) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(c));
    out += hex;
  }
  return out;
}

}  // namespace

// Headers only, as `inspect`: a folder of 30 GB checkpoints lists at once.
int runModels(const Args& args) {
  const ParsedOptions options = kModelsCommand.parse(args);
  std::vector<std::filesystem::path> folders(options.operands().begin(), options.operands().end());
  if (folders.empty()) folders.push_back(models::builtinModelDirectory("demo"));
  std::vector<models::CataloguedModel> listed;
  bool missingFolder = false;
  for (const std::filesystem::path& folder : folders) {
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error)) {
      std::fprintf(stderr, "shotchain models: %s is not a folder\n", folder.string().c_str());
      missingFolder = true;
      continue;
    }
    for (const std::filesystem::path& file : models::weightsFilesIn(folder))
      listed.push_back(models::catalogueModelFile(file));
  }
  if (options.flag("--json")) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const models::CataloguedModel& l : listed) {
      all.push_back({{"file", l.file.string()},
                     {"role", l.lora ? "lora" : models::roleName(l.id.role)},
                     {"model", l.lora ? models::describeLora(*l.lora, l.file) : l.id.description},
                     {"bytes", l.bytes},
                     {"dtype", l.dtype},
                     {"problem", l.problem}});
      // A name that is not UTF-8 shows as U+FFFD in "file": its bytes, so that the entry still names the file.
      if (!validUtf8(l.file.string())) all.back()["file_bytes_hex"] = hexBytes(l.file.string());
    }
    // A file name need not be UTF-8; its undecodable bytes are written as U+FFFD.
    std::printf("%s\n", all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else {
    for (const models::CataloguedModel& l : listed) {
      const char* role = l.lora ? "lora" : l.id.role == models::ModelRole::None ? "-" : models::roleName(l.id.role);
      const std::string what = l.lora ? models::describeLora(*l.lora, l.file) : l.id.description;
      std::printf("%-12s %-44s %10s  %-8s %s\n", role, what.empty() ? "-" : what.c_str(),
                  util::formatByteSize(l.bytes).c_str(), l.dtype.empty() ? "-" : l.dtype.c_str(),
                  printable(l.file.string()).c_str());
      if (!l.problem.empty()) std::printf("%-12s   problem: %s\n", "", printable(l.problem).c_str());
    }
    if (listed.empty()) std::printf("no weights files found\n");
  }
  return missingFolder ? 1 : 0;
}

}  // namespace shotchain::cli
