// `shotchain bench dit --ranks N`: one DiT forward spread over N processes (Ulysses; guidance in
// parallel with --guidance-parallel), timed, with what the collectives cost.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include "cli/bench/bench_dit_ranks.h"
#include "cli/distributed_session.h"
#include "distributed/process_group.h"
#include "models/wan/wan_model.h"

namespace shotchain::cli {
namespace {

at::Tensor seeded(const std::vector<std::int64_t>& shape, std::uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat));
}

struct Timed {
  double seconds = 0;
  distributed::CollectiveStats stats;
};

}  // namespace

int benchDitRanks(const ParsedOptions& parsed, const models::WanConfig& config, std::int64_t h, std::int64_t w,
                  int repeats, at::ScalarType dtype) {
  DistributedSession session = joinDistributed("bench dit", parsed);
  const bool guidance = parsed.flag("--guidance-parallel");
  models::WanModel model = models::WanModel::random(config, 42, {dtype});  // the default group: every rank alike
  const std::int64_t batch = guidance ? 2 : 1;
  const at::Tensor x = seeded({batch, config.inDim, 1, h * config.patch[1], w * config.patch[2]}, 1);
  const at::Tensor t = at::full({batch}, 500.0f);
  const at::Tensor context = seeded({batch, std::min<std::int64_t>(config.textLen, 77), config.textDim}, 2);
  auto forward = [&] { return model.forwardBatch(x, t, context); };

  (void)forward();  // warm-up
  std::vector<Timed> runs;
  for (int i = 0; i < repeats; ++i) {
    if (session.group) {
      session.group->barrier();
      session.group->resetStats();
    }
    const auto start = std::chrono::steady_clock::now();
    (void)forward();
    Timed run;
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (session.group) run.stats = session.group->stats();
    runs.push_back(run);
  }
  std::sort(runs.begin(), runs.end(), [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
  const Timed median = runs[runs.size() / 2];

  // The same forward on this process alone (rank 0), for the error of the spread one.
  double relativeL2 = 0;
  if (session.group) {
    const at::Tensor spread = forward();
    if (session.primary()) {
      model.setParallel(nullptr);
      const at::Tensor alone = forward();
      relativeL2 = (spread - alone).norm().item<double>() / alone.norm().item<double>();
    }
    session.group->barrier();
  }
  const int status = finishDistributed(session, 0);
  if (!session.primary()) return status;

  const distributed::CollectiveStats& s = median.stats;
  const double compute = median.seconds - s.seconds;
  const std::int64_t tokens = h * w;
  const int sequence = session.group ? session.group->sequenceSize() : 1;
  const int groups = session.group ? session.group->guidanceSize() : 1;
  const double perLayer = static_cast<double>(s.allToAllBytes) / static_cast<double>(config.numLayers);
  if (parsed.flag("--json")) {
    std::printf(
        "{\"ranks\": %d, \"sequence_ranks\": %d, \"guidance_ranks\": %d, \"config\": %s, \"tokens\": %lld, "
        "\"batch\": %lld, \"threads\": %d, \"repeats\": %d, \"forward_s\": %.6f, \"compute_s\": %.6f, "
        "\"collective_s\": %.6f, \"collectives\": %llu, \"bytes_sent_per_forward\": %llu, "
        "\"all_to_all_bytes_per_layer\": %.0f, \"rel_l2_vs_one_process\": %.3e}\n",
        session.worldSize, sequence, groups, config.toJson().c_str(), static_cast<long long>(tokens),
        static_cast<long long>(batch), at::get_num_threads(), repeats, median.seconds, compute, s.seconds,
        static_cast<unsigned long long>(s.calls), static_cast<unsigned long long>(s.bytesSent), perLayer, relativeL2);
    return 0;
  }
  std::printf(
      "dit over %d rank(s) (%d sequence x %d guidance): dim %lld, %lld layers, %lld heads, %lld tokens, batch %lld, "
      "%d threads per rank\n",
      session.worldSize, sequence, groups, static_cast<long long>(config.dim), static_cast<long long>(config.numLayers),
      static_cast<long long>(config.numHeads), static_cast<long long>(tokens), static_cast<long long>(batch),
      at::get_num_threads());
  std::printf("forward (one sampling step): %.4f s median of %d; compute %.4f s, in collectives %.4f s (%.0f%%)\n",
              median.seconds, repeats, compute, s.seconds, 100 * s.seconds / median.seconds);
  std::printf(
      "sent by rank 0 per step: %.1f KiB in %llu collectives; all-to-all per layer %.1f KiB; gathers %.1f KiB\n",
      static_cast<double>(s.bytesSent) / 1024, static_cast<unsigned long long>(s.calls), perLayer / 1024,
      static_cast<double>(s.bytesSent - s.allToAllBytes) / 1024);
  if (session.worldSize > 1) std::printf("relative L2 against one process: %.3e\n", relativeL2);
  return 0;
}

}  // namespace shotchain::cli
