// `bench residency --lora-switch`: two LoRAs take turns on the pinned tiny DiT; the switches are
// counted, patch bytes and time reported, no base weight moves, and the reload figure sits beside them.
// `--experts`: two experts both resident, swapped at the boundary, and read from disk, side by side.
#include <QTest>

#include <map>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;

class CliBenchLora : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void switchesLorasOnThePinnedDit() {
    const CliRun run = runCli(
        {"bench", "residency", "--config", "tiny", "--shots", "4", "--policies", "pinned", "--lora-switch", "--json"});
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

  void placesTwoExpertsEachWay() {
    const CliRun run = runCli(
        {"bench", "residency", "--config", "tiny", "--shots", "3", "--policies", "pinned", "--experts", "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const nlohmann::json bench = nlohmann::json::parse(run.out.left(run.out.size() - run.err.size()).toStdString());
    const nlohmann::json& experts = bench["experts"];
    QCOMPARE(experts.size(), std::size_t{3});
    std::map<std::string, nlohmann::json> by;
    for (const nlohmann::json& e : experts) {
      QVERIFY2(e["error"].get<std::string>().empty(), e["error"].get<std::string>().c_str());
      QCOMPARE(e["median_bytes_per_shot"].get<std::uint64_t>(), e["planned_bytes_per_shot"].get<std::uint64_t>());
      by[e["residency"].get<std::string>()] = e;
    }
    const std::uint64_t expert = by["resident"]["expert_bytes"].get<std::uint64_t>();
    QVERIFY(expert > 0);
    QCOMPARE(by["resident"]["median_bytes_per_shot"].get<std::uint64_t>(), std::uint64_t{0});
    QCOMPARE(by["swap"]["median_bytes_per_shot"].get<std::uint64_t>(), 4 * expert);
    QCOMPARE(by["reload"]["median_bytes_per_shot"].get<std::uint64_t>(), 2 * expert);
    QVERIFY(by["swap"]["reserved_peak"].get<std::uint64_t>() < by["resident"]["reserved_peak"].get<std::uint64_t>());
  }
};

SHOTCHAIN_TEST(CliBenchLora, Core)
#include "test_cli_bench_lora.moc"
