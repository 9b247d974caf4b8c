#pragma once

#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace shotchain::cli {

// Every command's option table (command_specs.cpp). The verbs parse with them; `shotchain help`
// and `shotchain VERB --help` print them.
extern const CommandSpec kValidateCommand;
extern const CommandSpec kInfoCommand;
extern const CommandSpec kInspectCommand;
extern const CommandSpec kConvertCommand;
extern const CommandSpec kModelsCommand;
extern const CommandSpec kVerifyCommand;
extern const CommandSpec kRenderCommand;
extern const CommandSpec kPlanCommand;
extern const CommandSpec kBenchDitCommand;
extern const CommandSpec kBenchVaeCommand;
extern const CommandSpec kBenchResidencyCommand;
extern const CommandSpec kBenchStreamingCommand;
extern const CommandSpec kBenchCacheCommand;
extern const CommandSpec kCalibrateCacheCommand;
extern const CommandSpec kTrainDemoCommand;
extern const CommandSpec kEvalDemoCommand;
extern const CommandSpec kImportComfyCommand;
extern const CommandSpec kExportComfyCommand;
extern const CommandSpec kVersionCommand;

// All of them, in the order `shotchain help` lists them.
const std::vector<const CommandSpec*>& commandSpecs();

// The commands of one verb ("bench": dit, vae, residency), or the one named ("bench vae").
std::vector<const CommandSpec*> commandsOf(const std::string& verbOrCommand);

// `shotchain help`: every command's synopsis and summary.
std::string overview();

}  // namespace shotchain::cli
