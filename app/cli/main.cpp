#include <cstdio>
#include <exception>
#include <string>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "cli/verbs_demo.h"
#include "runtime/torch_runtime.h"

namespace {

using Run = int (*)(const shotchain::cli::Args&);

struct Verb {
  const char* name;
  Run run;
};

// What runs each verb; what each takes and prints as help is in command_specs.cpp.
const Verb kVerbs[] = {
    {"validate", &shotchain::cli::runValidate},    {"info", &shotchain::cli::runInfo},
    {"inspect", &shotchain::cli::runInspect},      {"verify", &shotchain::cli::runVerify},
    {"render", &shotchain::cli::runRender},        {"bench", &shotchain::cli::runBench},
    {"train-demo", &shotchain::cli::runTrainDemo}, {"eval-demo", &shotchain::cli::runEvalDemo},
    {"plan", &shotchain::cli::runPlan},            {"version", &shotchain::cli::runVersion},
    {"models", &shotchain::cli::runModels},        {"import-comfy", &shotchain::cli::runImportComfy},
    {"export-comfy", &shotchain::cli::runExportComfy}, {"convert", &shotchain::cli::runConvert},
    {"calibrate-cache", &shotchain::cli::runCalibrateCache},
};

void printHelp(std::FILE* to, const std::string& command) {
  for (const shotchain::cli::CommandSpec* spec : shotchain::cli::commandsOf(command))
    std::fprintf(to, "%s\n", spec->help().c_str());
}

void printUsageError(const shotchain::cli::UsageError& error) {
  std::fprintf(stderr, "shotchain %s: %s\n", error.command().c_str(), error.what());
  for (const shotchain::cli::CommandSpec* spec : shotchain::cli::commandsOf(error.command()))
    std::fprintf(stderr, "%s\n", spec->synopsis(100, "usage: shotchain ").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  shotchain::runtime::relaunchWithPassiveOpenMp(argv);
  if (argc < 2) {
    std::fputs(shotchain::cli::overview().c_str(), stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    std::fputs(shotchain::cli::overview().c_str(), stdout);
    return 0;
  }
  const shotchain::cli::Args args(argv + 2, argv + argc);
  for (const Verb& verb : kVerbs) {
    if (name != verb.name) continue;
    try {
      shotchain::runtime::initTorchRuntime();
      return verb.run(args);
    } catch (const shotchain::cli::HelpRequested& help) {
      printHelp(stdout, help.command());
      return 0;
    } catch (const shotchain::cli::UsageError& error) {
      printUsageError(error);
      return 2;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "shotchain %s: %s\n", verb.name, error.what());
      return 1;
    }
  }
  std::fprintf(stderr, "shotchain: unknown verb \"%s\"\n\n", name.c_str());
  std::fputs(shotchain::cli::overview().c_str(), stderr);
  return 2;
}
