// `bench residency --lora-switch` (#39): two LoRAs take turns on the pinned tiny DiT; the switches are
// counted, patch bytes and time reported, no base weight moves, and the reload figure sits beside them.
#include <QTest>

#include <nlohmann/json.hpp>

#include "test_registry.h"
#include "cli_run.h"
#include "test_support.h"

using namespace shotchain::testing;

class CliBenchLora : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void switchesLorasOnThePinnedDit() {
    const CliRun run = runCli({"bench", "residency", "--config", "tiny", "--shots", "4", "--policies", "pinned", "--lora-switch", "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const nlohmann::json bench = nlohmann::json::parse(run.out.left(run.out.size() - run.err.size()).toStdString());
    const nlohmann::json& lora = bench["lora_switch"];
    QVERIFY2(lora["error"].get<std::string>().empty(), lora["error"].get<std::string>().c_str());
    QCOMPARE(lora["switches"].get<int>(), 3);
    QVERIFY(lora["lora_weights"].get<int>() > 0);
    QVERIFY(lora["median_bytes_written"].get<double>() > 0);
    QVERIFY(lora["median_patch_seconds"].get<double>() > 0);
    QCOMPARE(lora["base_bytes_moved"].get<std::uint64_t>(), std::uint64_t{0});
    QVERIFY(lora["reload_seconds_per_shot"].get<double>() > 0);
  }
};

SHOTCHAIN_TEST(CliBenchLora, Core)
#include "test_cli_bench_lora.moc"
