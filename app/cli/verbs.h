#pragma once

#include "cli/cli_options.h"

namespace shotchain::cli {

// Each command parses its arguments with its table in command_specs.h (a command of a verb with several,
// "bench vae", gets them from its sub-command on); a usage error is thrown (UsageError, HelpRequested) and
// reported by main. commands.cpp pairs each with its table.
int runValidate(const Args& args);
int runInfo(const Args& args);
int runVersion(const Args& args);
int runInspect(const Args& args);
int runConvert(const Args& args);
int runModels(const Args& args);
int runRender(const Args& args);
int runPlan(const Args& args);
int runCalibrateCache(const Args& args);
int runImportComfy(const Args& args);
int runExportComfy(const Args& args);
// The tools beside the product's verbs: golden verification (cli/verify/), benchmarks (cli/bench/), the
// demo model's training and evaluation (cli/demo/).
int runVerify(const Args& args);
int runBenchDit(const Args& args);
int runBenchVae(const Args& args);
int runBenchResidency(const Args& args);
int runBenchStreaming(const Args& args);
int runBenchCache(const Args& args);
int runTrainDemo(const Args& args);
int runEvalDemo(const Args& args);

}  // namespace shotchain::cli
