#pragma once

#include "cli/cli_options.h"

namespace shotchain::cli {

// Each verb parses its arguments with its table in command_specs.h; a usage error is thrown
// (UsageError, HelpRequested) and reported by main.
int runValidate(const Args& args);
int runInfo(const Args& args);
int runVersion(const Args& args);
int runInspect(const Args& args);
int runConvert(const Args& args);
int runModels(const Args& args);
int runVerify(const Args& args);
int runBench(const Args& args);
int runBenchVae(const Args& args);  // "bench vae", dispatched by runBench
int runBenchResidency(const Args& args);  // "bench residency", dispatched by runBench
int runBenchStreaming(const Args& args);  // "bench streaming", dispatched by runBench
int runBenchCache(const Args& args);  // "bench cache", dispatched by runBench
int runRender(const Args& args);
int runCalibrateCache(const Args& args);
int runPlan(const Args& args);
int runImportComfy(const Args& args);
int runExportComfy(const Args& args);

}  // namespace shotchain::cli
