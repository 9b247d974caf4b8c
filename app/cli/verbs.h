#pragma once

#include <string>
#include <vector>

namespace shotchain::cli {

using Args = std::vector<std::string>;

int runValidate(const Args& args);
int runInfo(const Args& args);
int runVersion(const Args& args);
int runInspect(const Args& args);
int runVerify(const Args& args);
int runBench(const Args& args);
int runBenchVae(const Args& args);  // "bench vae", dispatched by runBench
int runBenchResidency(const Args& args);  // "bench residency", dispatched by runBench
int runRender(const Args& args);
int runPlan(const Args& args);

}  // namespace shotchain::cli
