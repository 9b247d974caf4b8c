#include <cstdio>
#include <string>

#include "cli/verbs.h"
#include "memory/memory_planner.h"
#include "models/model_files.h"
#include "runtime/cuda_device.h"
#include "sequence/sequence_io.h"
#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

int usage() {
  std::fprintf(stderr,
               "usage: shotchain plan SEQUENCE [--budget SIZE] [--policy pinned|offload|reload|auto] [--device cpu|cuda[:N]] "
               "[--json]\n");
  return 2;
}

}  // namespace

int runPlan(const Args& args) {
  std::string file, device = cudaBuild() && describeCudaDevice().available ? "cuda:0" : "cpu";
  std::optional<std::uint64_t> budget;
  std::optional<ResidencyPolicy> policy;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool hasValue = i + 1 < args.size();
    if (a == "--json") {
      json = true;
    } else if (a == "--budget" && hasValue) {
      budget = parseByteSize(args[++i]);
      if (!budget) {
        std::fprintf(stderr, "shotchain plan: --budget: \"%s\" is not a size (try 16GiB)\n", args[i].c_str());
        return 2;
      }
    } else if (a == "--policy" && hasValue) {
      policy = residencyPolicyFromString(args[++i]);
      if (!policy) {
        std::fprintf(stderr, "shotchain plan: --policy: \"%s\" is not one of pinned, offload, reload, auto\n", args[i].c_str());
        return 2;
      }
    } else if (a == "--device" && hasValue) {
      device = args[++i];
    } else if (!a.starts_with("--") && file.empty()) {
      file = a;
    } else {
      return usage();
    }
  }
  if (file.empty()) return usage();

  const LoadResult result = loadSequenceFile(file);
  for (const Diagnostic& d : result.diagnostics) std::fprintf(stderr, "%s\n", d.format(file).c_str());
  if (!result.ok()) return 1;
  const Sequence& sequence = *result.sequence;
  const models::ModelFiles files =
      models::resolveModelFiles(sequence.settings.model, std::filesystem::absolute(file).parent_path());
  const MemoryPlan plan = planMemory(planRequestFromFiles(files, sequence, device, budget, policy));
  if (json) {
    std::printf("%s\n", planToJson(plan).c_str());
  } else {
    std::printf("%s: %s\n", file.c_str(), files.description.c_str());
    std::printf("%s", formatPlan(plan).c_str());
  }
  return plan.fits ? 0 : 1;
}

}  // namespace shotchain::cli
