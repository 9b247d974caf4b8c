// `shotchain bench streaming` on the tiny random causal config: it runs, its JSON holds every figure the
// benchmark promises, the cache stops growing once the window is full, and bad options are usage errors.
#include <QTest>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;

class CliBenchStreaming : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void reportsTheStreamFigures() {
    const CliRun run = runCli({"bench", "streaming", "--config", "tiny", "--size", "32x32", "--latent-frames", "3",
                               "--steps", "2", "--shots", "6", "--window", "2", "--repeats", "1", "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const nlohmann::json bench = nlohmann::json::parse(run.out.left(run.out.size() - run.err.size()).toStdString());
    QVERIFY(bench["cached_s"].get<double>() > 0 && bench["rerun_s"].get<double>() > 0);
    QVERIFY(bench["speedup"].get<double>() > 0);
    QVERIFY(bench["first_frame_s"].get<double>() > 0);
    const auto perFrame = bench["cache_bytes_per_frame"].get<std::uint64_t>();
    QVERIFY(perFrame > 0);
    const nlohmann::json& chain = bench["chain"];
    QCOMPARE(chain.size(), std::size_t{6});
    // Shot 1 streams 3 frames (sink 1 + 2 in the window: full); every later shot keeps it at 3.
    for (const nlohmann::json& shot : chain) {
      QCOMPARE(shot["frames_held"].get<int>(), 3);
      QCOMPARE(shot["cache_bytes"].get<std::uint64_t>(), 3 * perFrame);
    }
    QCOMPARE(chain.back()["live_bytes"].get<std::uint64_t>(), chain[1]["live_bytes"].get<std::uint64_t>());
    QVERIFY(bench["cuts"].empty());  // the cut figures are the demo's
  }

  void badOptionsAreUsageErrors() {
    const CliRun config = runCli({"bench", "streaming", "--config", "huge"});
    QCOMPARE(config.exitCode, 2);
    QVERIFY2(config.err.contains("--config: demo or tiny"), qPrintable(config.err));
    const CliRun frames = runCli({"bench", "streaming", "--config", "demo", "--latent-frames", "0"});
    QCOMPARE(frames.exitCode, 2);
    QVERIFY2(frames.err.contains("--latent-frames"), qPrintable(frames.err));
  }
};

SHOTCHAIN_TEST(CliBenchStreaming, Core)
#include "test_cli_bench_streaming.moc"
