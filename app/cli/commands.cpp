#include "cli/commands.h"

#include "cli/command_specs.h"
#include "cli/verbs.h"

namespace shotchain::cli {
namespace {

const Command kCommands[] = {
    {&kValidateCommand, &runValidate},
    {&kInfoCommand, &runInfo},
    {&kInspectCommand, &runInspect},
    {&kConvertCommand, &runConvert},
    {&kModelsCommand, &runModels},
    {&kVerifyCommand, &runVerify},
    {&kRenderCommand, &runRender},
    {&kPlanCommand, &runPlan},
    {&kBenchDitCommand, &runBenchDit},
    {&kBenchVaeCommand, &runBenchVae},
    {&kBenchResidencyCommand, &runBenchResidency},
    {&kBenchStreamingCommand, &runBenchStreaming},
    {&kBenchCacheCommand, &runBenchCache},
    {&kCalibrateCacheCommand, &runCalibrateCache},
    {&kTrainDemoCommand, &runTrainDemo},
    {&kEvalDemoCommand, &runEvalDemo},
    {&kImportComfyCommand, &runImportComfy},
    {&kExportComfyCommand, &runExportComfy},
    {&kVersionCommand, &runVersion},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

const Command* findCommand(const std::string& verb, const Args& args) {
  std::vector<const Command*> subs;
  for (const Command& command : kCommands) {
    if (command.spec->name == verb) return &command;
    if (command.spec->verb() == verb) subs.push_back(&command);
  }
  if (subs.empty()) return nullptr;
  const std::string sub = args.empty() ? std::string() : args[0];
  if (sub == "--help" || sub == "-h") throw HelpRequested(verb);
  std::string names;
  for (const Command* command : subs) {
    if (command->spec->name == verb + " " + sub) return command;
    names += (names.empty() ? "" : ", ") + command->spec->name.substr(verb.size() + 1);
  }
  throw UsageError(
      verb, sub.empty() ? "which one? " + names : "\"" + sub + "\" is not a " + verb + " command (" + names + ")");
}

std::vector<const CommandSpec*> commandsOf(const std::string& verbOrCommand) {
  std::vector<const CommandSpec*> found;
  for (const Command& command : kCommands)
    if (command.spec->name == verbOrCommand) return {command.spec};
  for (const Command& command : kCommands)
    if (command.spec->verb() == verbOrCommand) found.push_back(command.spec);
  return found;
}

std::string overview() {
  std::string text = "usage: shotchain VERB [ARGS...]   (shotchain VERB --help describes every option)\n\nverbs:\n";
  for (const Command& command : kCommands)
    text += command.spec->synopsis(100, "  ") + "\n" + wrapText("      " + command.spec->summary, 100, "      ") + "\n";
  text += "  help\n      this list\n";
  return text;
}

}  // namespace shotchain::cli
