#include <cstdio>
#include <exception>
#include <string>

#include <c10/util/Exception.h>

#include "cli/commands.h"
#include "runtime/torch_runtime.h"

namespace {

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
  try {
    const shotchain::cli::Command* command = shotchain::cli::findCommand(name, args);
    if (!command) {
      std::fprintf(stderr, "shotchain: unknown verb \"%s\"\n\n", name.c_str());
      std::fputs(shotchain::cli::overview().c_str(), stderr);
      return 2;
    }
    try {
      shotchain::runtime::initTorchRuntime();
      return command->run(args);
    } catch (const std::exception& error) {
      if (dynamic_cast<const shotchain::cli::UsageError*>(&error) ||
          dynamic_cast<const shotchain::cli::HelpRequested*>(&error))
        throw;
      // libtorch's own errors carry their C++ frames: the message alone is for people.
      const auto* torch = dynamic_cast<const c10::Error*>(&error);
      std::fprintf(stderr, "shotchain %s: %s\n", name.c_str(), torch ? torch->what_without_backtrace() : error.what());
      return 1;
    }
  } catch (const shotchain::cli::HelpRequested& help) {
    printHelp(stdout, help.command());
    return 0;
  } catch (const shotchain::cli::UsageError& error) {
    printUsageError(error);
    return 2;
  }
}
