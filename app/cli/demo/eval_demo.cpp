#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "demo/demo_configs.h"
#include "demo/demo_eval.h"

namespace shotchain::cli {

int runEvalDemo(const Args& args) {
  const ParsedOptions parsed = kEvalDemoCommand.parse(args);
  demo::DemoEvalOptions options;
  options.dir = parsed.text("--dir").value();
  options.samples = parsed.integer("--samples").value_or(options.samples);
  options.chains = parsed.integer("--chains").value_or(options.chains);
  options.settings.steps = parsed.integer("--steps").value_or(demo::kDemoSteps);
  options.settings.shift = parsed.number("--shift").value_or(demo::kDemoShift);
  options.settings.guidance = parsed.number("--guidance").value_or(demo::kDemoGuidance);
  options.settings.conditionNoise = parsed.integer("--condition-noise").value_or(demo::kDemoConditionNoise);
  const bool json = parsed.flag("--json");
  if (!json) options.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const demo::DemoEvalReport report = demo::evaluateDemo(options);
  std::printf("%s\n", json ? demo::demoEvalJson(report).c_str() : demo::formatDemoEvalTable(report).c_str());
  return 0;
}

}  // namespace shotchain::cli
