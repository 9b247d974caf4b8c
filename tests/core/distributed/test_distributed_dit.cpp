// The DiT spread over 2 (and 4) local processes through c10d over loopback, each process this test
// binary started again as one rank: Ulysses sequence parallelism equal to one process (scalar and
// per-frame timesteps, token counts that need padding, block-causal attention, ragged batches),
// guidance in parallel equal to one process, and collectives that fail within their timeout naming
// the rank that died or hangs.
#include <QCoreApplication>
#include <QTest>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "distributed/process_group.h"
#include "models/wan/wan_model.h"
#include "rank_processes.h"
#include "runtime/torch_runtime.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

const char* const kWorker = "SHOTCHAIN_TEST_WORKER";

at::Tensor seeded(const std::vector<std::int64_t>& shape, std::uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat));
}

double relativeL2(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).norm().item<double>() / std::max(b.norm().item<double>(), 1e-30);
}

models::WanConfig tinyConfig(bool perFrame, std::int64_t heads) {
  models::WanConfig config = models::WanConfig::preset("tiny");
  config.injectSampleInfo = perFrame;
  config.numHeads = heads;
  config.dim = 32 * heads;
  return config;
}

// One case: the forward spread over the group against the same model on this process alone.
bool check(const char* name, models::WanModel& model, const std::shared_ptr<models::DitParallel>& group,
           const std::function<at::Tensor(const models::WanModel&)>& forward, int rank) {
  model.setParallel(group);
  const at::Tensor spread = forward(model);
  model.setParallel(nullptr);
  const at::Tensor alone = forward(model);
  const double error = relativeL2(spread, alone);
  std::printf("rank %d case %s rel_l2 %.3e\n", rank, name, error);
  std::fflush(stdout);
  return error <= 1e-5;
}

std::shared_ptr<distributed::DistributedGroup> joinFromEnvironment(int guidanceGroups, int timeoutSeconds) {
  distributed::GroupOptions options;
  options.rendezvous = *distributed::rendezvousFromEnvironment();
  options.timeout = std::chrono::seconds(timeoutSeconds);
  options.guidanceGroups = guidanceGroups;
  return distributed::DistributedGroup::join(options);
}

int sequenceParallelWorker(int guidanceGroups) {
  const auto group = joinFromEnvironment(guidanceGroups, 30);
  const int rank = group->rank();
  bool ok = true;
  const at::Tensor contextA = seeded({7, 48}, 1), contextB = seeded({5, 48}, 2);
  {
    models::WanModel model = models::WanModel::random(tinyConfig(false, 2 * group->sequenceSize()), 5);
    const at::Tensor even = seeded({16, 2, 4, 4}, 3);  // 2·2·2 = 8 tokens
    const at::Tensor odd = seeded({16, 3, 6, 2}, 4);   // 3·3·1 = 9 tokens: padded
    const at::Tensor t = at::tensor({700.0f});
    ok &= check(
        "scalar_even", model, group, [&](const models::WanModel& m) { return m.forward({even}, t, {contextA})[0]; },
        rank);
    ok &= check(
        "scalar_odd", model, group, [&](const models::WanModel& m) { return m.forward({odd}, t, {contextA})[0]; },
        rank);
    ok &= check(
        "ragged_batch", model, group,
        [&](const models::WanModel& m) {
          return at::cat({m.forward({odd, even}, at::tensor({300.0f, 800.0f}), {contextA, contextB})[0].flatten(),
                          m.forward({odd, even}, at::tensor({300.0f, 800.0f}), {contextA, contextB})[1].flatten()});
        },
        rank);
    // Classifier-free guidance as one batch of 2: split between the guidance groups when there are 2.
    const at::Tensor x2 = at::stack({odd, odd}),
                     c2 = at::stack({contextA, at::constant_pad_nd(contextB, {0, 0, 0, 2})});
    ok &= check(
        "guidance_batch", model, group,
        [&](const models::WanModel& m) {
          return m.forwardBatch(x2, at::tensor({500.0f, 500.0f}), c2);
        },
        rank);
  }
  {
    models::WanModel model = models::WanModel::random(tinyConfig(true, 2 * group->sequenceSize()), 6);
    const at::Tensor odd = seeded({16, 3, 6, 2}, 7);
    const at::Tensor t = at::tensor({900.0f, 500.0f, 100.0f}).unsqueeze(0);  // [1, F]: one per latent frame
    ok &= check(
        "per_frame_odd", model, group,
        [&](const models::WanModel& m) { return m.forward({odd}, t, {contextA}, nullptr, 1)[0]; }, rank);
    model.setCausalBlockSize(1);
    ok &= check(
        "per_frame_block_causal", model, group,
        [&](const models::WanModel& m) { return m.forward({odd}, t, {contextA}, nullptr, 1)[0]; }, rank);
    const at::Tensor x2 = at::stack({odd, odd}), c2 = at::stack({contextA, contextA});
    ok &= check(
        "per_frame_guidance_batch", model, group,
        [&](const models::WanModel& m) {
          return m.forwardBatch(x2, at::cat({t, t}), c2, 1);
        },
        rank);
  }
  const distributed::CollectiveStats stats = group->stats();
  std::printf("rank %d collectives %llu bytes %llu\n", rank, static_cast<unsigned long long>(stats.calls),
              static_cast<unsigned long long>(stats.bytesSent));
  group->barrier();
  return ok ? 0 : 1;
}

// Rank 1 dies (SIGKILL) or hangs; rank 0's all-to-all must fail within the timeout naming rank 1.
int faultWorker(const std::string& fault) {
  auto start = std::chrono::steady_clock::now();
  try {
    const auto group = joinFromEnvironment(1, 4);
    group->barrier();  // both ranks are in the group before one of them goes
    if (group->rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (fault == "die") std::raise(SIGKILL);
      std::this_thread::sleep_for(std::chrono::seconds(60));
      return 0;
    }
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < 100000; ++i) (void)group->allToAll(at::ones({2, 8}));
  } catch (const distributed::DistributedError& error) {
    std::printf("error after %.1f s (rank at fault %d): %s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), error.rankAtFault(),
                error.what());
    std::fflush(stdout);
    std::_Exit(6);
  }
  return 0;
}

int headsWorker() {
  const auto group = joinFromEnvironment(1, 30);
  models::WanModel model = models::WanModel::random(tinyConfig(false, 3), 5);
  model.setParallel(group);
  try {
    (void)model.forward({seeded({16, 1, 4, 4}, 1)}, at::tensor({1.0f}), {seeded({3, 48}, 2)});
  } catch (const std::invalid_argument& error) {
    std::printf("refused: %s\n", error.what());
    group->barrier();
    return 3;
  }
  return 0;
}

}  // namespace

class DistributedDit : public QObject {
  Q_OBJECT

  std::vector<RankRun> run(const QString& worker, int ranks, int timeoutMs) {
    RankProcesses processes(QCoreApplication::applicationFilePath(), {}, ranks, {{kWorker, worker}});
    return processes.finish(timeoutMs);
  }

 private Q_SLOTS:
  void badVariablesAreNamed() {
    qputenv("RANK", "2");
    qputenv("WORLD_SIZE", "2");
    qputenv("MASTER_ADDR", "127.0.0.1");
    qputenv("MASTER_PORT", "29500");
    QVERIFY(errorOf([] {
              distributed::rendezvousFromEnvironment();
            }).contains("RANK=\"2\": expected a whole number in 0-1"));
    qputenv("RANK", "1");
    qunsetenv("MASTER_ADDR");
    QVERIFY(errorOf([] { distributed::rendezvousFromEnvironment(); }).contains("MASTER_ADDR is not set"));
    qputenv("MASTER_ADDR", "127.0.0.1");
    qputenv("MASTER_PORT", "port");
    QVERIFY(errorOf([] { distributed::rendezvousFromEnvironment(); }).contains("MASTER_PORT"));
    qputenv("MASTER_PORT", "29500");
    const std::optional<distributed::Rendezvous> placed = distributed::rendezvousFromEnvironment();
    QVERIFY(placed && placed->rank == 1 && placed->worldSize == 2 && placed->masterPort == 29500);
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) qunsetenv(name);
    QVERIFY(!distributed::rendezvousFromEnvironment());
  }

  void sequenceParallelEqualsOneProcess() {
    const std::vector<RankRun> runs = run("sequence", 2, 60000);
    for (const RankRun& r : runs) {
      QVERIFY2(r.exitCode == 0, qPrintable(r.output));
      QCOMPARE(r.output.count(" rel_l2 "), 7);
      QVERIFY2(r.output.contains(" bytes "), qPrintable(r.output));
    }
  }

  void guidanceParallelEqualsOneProcess() {
    const std::vector<RankRun> runs = run("guidance", 2, 60000);
    for (const RankRun& r : runs) QVERIFY2(r.exitCode == 0, qPrintable(r.output));
  }

  void guidanceTimesSequenceGridOfFour() {
    const std::vector<RankRun> runs = run("guidance", 4, 90000);
    for (const RankRun& r : runs) QVERIFY2(r.exitCode == 0, qPrintable(r.output));
  }

  void headsThatDoNotDivideAreRefused() {
    const std::vector<RankRun> runs = run("heads", 2, 60000);
    for (const RankRun& r : runs) {
      QVERIFY2(r.exitCode == 3, qPrintable(r.output));
      QVERIFY2(r.output.contains("3 heads do not divide by 2 ranks"), qPrintable(r.output));
    }
  }

  void killedRankIsNamedWithinTheTimeout() {
    const std::vector<RankRun> runs = run("die", 2, 30000);
    QVERIFY2(runs[0].exitCode == 6, qPrintable(runs[0].output));
    QVERIFY2(runs[0].output.contains("rank at fault 1"), qPrintable(runs[0].output));
    QVERIFY2(runs[0].output.contains("rank 1 "), qPrintable(runs[0].output));
    QVERIFY2(runs[0].seconds < 15, qPrintable(runs[0].output));
  }

  void hungRankIsNamedWithinTheTimeout() {
    RankProcesses processes(QCoreApplication::applicationFilePath(), {}, 2, {{kWorker, "hang"}});
    const std::vector<RankRun> first = [&] {
      std::vector<RankRun> runs;
      const bool finished = processes[0].waitForFinished(30000);
      RankRun r;
      r.exitCode = finished && processes[0].exitStatus() == QProcess::NormalExit ? processes[0].exitCode() : -1;
      r.output = QString::fromUtf8(processes[0].readAllStandardOutput()) +
                 QString::fromUtf8(processes[0].readAllStandardError());
      runs.push_back(r);
      processes[1].kill();
      processes[1].waitForFinished(5000);
      return runs;
    }();
    QVERIFY2(first[0].exitCode == 6, qPrintable(first[0].output));
    QVERIFY2(first[0].output.contains("rank at fault 1"), qPrintable(first[0].output));
    QVERIFY2(first[0].output.contains("timed out", Qt::CaseInsensitive), qPrintable(first[0].output));
  }
};

int main(int argc, char** argv) {
  if (const char* worker = std::getenv(kWorker)) {
    runtime::initTorchRuntime();
    const std::string role = worker;
    if (role == "sequence") return sequenceParallelWorker(1);
    if (role == "guidance") return sequenceParallelWorker(2);
    if (role == "heads") return headsWorker();
    return faultWorker(role);
  }
  QCoreApplication app(argc, argv);
  DistributedDit test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_distributed_dit.moc"
