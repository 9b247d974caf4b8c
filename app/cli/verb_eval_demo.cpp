#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli/option_values.h"
#include "cli/verbs_demo.h"
#include "demo/demo_configs.h"
#include "demo/demo_eval.h"

namespace shotchain::cli {

int runEvalDemo(const Args& args) {
  demo::DemoEvalOptions options;
  options.dir = "resources/demo";
  options.settings.steps = demo::kDemoSteps;
  options.settings.shift = demo::kDemoShift;
  options.settings.guidance = demo::kDemoGuidance;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    if (a == "--json") json = true;
    else if (a == "--dir") options.dir = value();
    else if (a == "--samples") options.samples = intOption(a, value());
    else if (a == "--chains") options.chains = intOption(a, value());
    else if (a == "--steps") options.settings.steps = intOption(a, value());
    else if (a == "--shift") options.settings.shift = doubleOption(a, value());
    else if (a == "--guidance") options.settings.guidance = doubleOption(a, value());
    else throw std::invalid_argument("unknown option \"" + a +
                                     "\" (eval-demo [--json] [--dir DIR] [--samples N] [--chains N] [--steps N] "
                                     "[--shift X] [--guidance X])");
  }
  if (!json)
    options.log = [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
    };
  const demo::DemoEvalReport report = demo::evaluateDemo(options);
  std::printf("%s\n", json ? demo::demoEvalJson(report).c_str() : demo::formatDemoEvalTable(report).c_str());
  return 0;
}

}  // namespace shotchain::cli
