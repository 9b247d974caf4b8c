#include <cstdio>
#include <string>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "memory/memory_planner.h"
#include "memory/rank_plan.h"
#include "resolve/plan_request.h"
#include "resolve/resolve_sequence.h"
#include "runtime/cuda_device.h"
#include "sequence/sequence_io.h"

namespace shotchain::cli {

int runPlan(const Args& args) {
  const ParsedOptions parsed = kPlanCommand.parse(args);
  const std::string file = parsed.operands().front();
  const std::string device =
      parsed.text("--device")
          .value_or(runtime::cudaBuild() && runtime::describeCudaDevice().available ? "cuda:0" : "cpu");
  const std::optional<std::uint64_t> budget = parsed.byteSize("--budget");
  const std::optional<ResidencyPolicy> policy =
      parsed.text("--policy") ? residencyPolicyFromString(*parsed.text("--policy")) : std::nullopt;
  const bool json = parsed.flag("--json");

  const LoadResult result = loadSequenceFile(file);
  for (const Diagnostic& d : result.diagnostics) std::fprintf(stderr, "%s\n", d.format(file).c_str());
  if (!result.ok()) return 1;
  const Sequence& sequence = *result.sequence;
  const resolve::ResolvedSequence resolved = resolve::resolveSequence(
      sequence, {std::filesystem::absolute(file).parent_path(), /*missingFilesAreErrors=*/true});
  for (const Diagnostic& d : resolved.problems) std::fprintf(stderr, "%s\n", d.format(file).c_str());
  if (resolved.models.assumed) return 1;  // the model files cannot be read: the problems say why
  const models::ModelFiles& files = resolved.models.files;
  const memory::PlanRequest request =
      resolve::planRequest(resolved, sequence.settings, {device, parsed.byteSize("--device-memory"), budget, policy});
  const memory::MemoryPlan plan = memory::planMemory(request);
  const std::optional<std::int64_t> ranks = parsed.int64("--ranks");
  if (ranks && (*ranks < 1 || *ranks > 4096)) throw UsageError("plan", "--ranks: 1 to 4096");
  const std::optional<memory::RankPlan> perRank =
      ranks ? std::optional<memory::RankPlan>(
                  memory::planPerRank(request, plan, static_cast<int>(*ranks), parsed.flag("--guidance-parallel")))
            : std::nullopt;
  if (json && perRank) {
    std::printf("{\"plan\": %s,\n\"per_rank\": %s}\n", memory::planToJson(plan).c_str(),
                memory::rankPlanToJson(*perRank).c_str());
  } else if (json) {
    std::printf("%s\n", memory::planToJson(plan).c_str());
  } else {
    std::printf("%s: %s\n", file.c_str(), files.description.c_str());
    std::printf("%s", memory::formatPlan(plan).c_str());
    if (perRank) std::printf("\n%s", memory::formatRankPlan(*perRank).c_str());
  }
  return plan.fits && (!perRank || perRank->refusal.empty()) ? 0 : 1;
}

}  // namespace shotchain::cli
