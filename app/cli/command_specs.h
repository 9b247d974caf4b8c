#pragma once

#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace shotchain::cli {

// Every command's option table (command_specs.cpp). The verbs parse with them; commands.cpp pairs each with
// what runs it, and `shotchain help` and `shotchain VERB --help` print them.
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

}  // namespace shotchain::cli
