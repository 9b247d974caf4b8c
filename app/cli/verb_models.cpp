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
    for (const models::CataloguedModel& l : listed)
      all.push_back({{"file", l.file.string()},
                     {"role", l.lora ? "lora" : models::roleName(l.id.role)},
                     {"model", l.lora ? models::describeLora(*l.lora, l.file) : l.id.description},
                     {"bytes", l.bytes},
                     {"dtype", l.dtype},
                     {"problem", l.problem}});
    // A file name need not be UTF-8; its undecodable bytes are written as U+FFFD.
    std::printf("%s\n", all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else {
    for (const models::CataloguedModel& l : listed) {
      const char* role = l.lora ? "lora" : l.id.role == models::ModelRole::None ? "-" : models::roleName(l.id.role);
      const std::string what = l.lora ? models::describeLora(*l.lora, l.file) : l.id.description;
      std::printf("%-12s %-44s %10s  %-8s %s\n", role, what.empty() ? "-" : what.c_str(),
                  util::formatByteSize(l.bytes).c_str(), l.dtype.empty() ? "-" : l.dtype.c_str(),
                  l.file.string().c_str());
      if (!l.problem.empty()) std::printf("%-12s   problem: %s\n", "", l.problem.c_str());
    }
    if (listed.empty()) std::printf("no weights files found\n");
  }
  return missingFolder ? 1 : 0;
}

}  // namespace shotchain::cli
