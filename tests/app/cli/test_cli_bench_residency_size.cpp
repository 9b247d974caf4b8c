// `shotchain bench residency --size`: the random DiT of real 14B block shapes is written into the weights folder
// once and reused by the next run (not rewritten), the chain reads it from there under pinned and reload, and the
// JSON holds the ratio figures; a file that no longer fits its name is found out from its header.
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/bench/bench_dit_weights.h"
#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

// One block of the 14B's shapes, at the smallest shot a Wan VAE takes: the weights are real-sized, the
// activations tiny, so that two runs fit a minute on two cores.
QStringList oneBlockRun(const QString& weightsDir) {
  return {"bench",         "residency",
          "--size",        "14b-layers:1",
          "--weights-dir", weightsDir,
          "--shots",       "2",
          "--steps",       "1",
          "--width",       "16",
          "--height",      "16",
          "--frames",      "1",
          "--policies",    "pinned,reload",
          "--json"};
}

nlohmann::json parsedJson(const CliRun& run) {
  return nlohmann::json::parse(run.out.left(run.out.size() - run.err.size()).toStdString());
}

struct FileStamp {
  ino_t inode = 0;
  timespec modified{};
};

FileStamp stampOf(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  return {info.st_ino, info.st_mtim};
}

}  // namespace

class CliBenchResidencySize : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void writesTheWeightsOnceAndReadsThemEachShot() {
    QTemporaryDir dir;
    const CliRun first = runCli(oneBlockRun(dir.path()));
    QVERIFY2(first.exitCode == 0, qPrintable(first.out));
    const nlohmann::json a = parsedJson(first);
    QCOMPARE(a["size"].get<std::string>(), std::string("14b-layers:1"));
    QCOMPARE(a["dit_layers"].get<int>(), 1);
    QVERIFY(a["weights_written"].get<bool>());
    const std::string file = a["weights_file"].get<std::string>();
    QCOMPARE(std::filesystem::path(file).parent_path(), std::filesystem::path(dir.path().toStdString()));
    QCOMPARE(std::filesystem::path(file).filename().string(),
             std::string("wan_random_14b-layers1_bfloat16.safetensors"));
    QCOMPARE(a["weights_bytes"].get<std::uint64_t>(), std::filesystem::file_size(file));
    QVERIFY(a["weights_bytes"].get<std::uint64_t>() > 300'000'000);  // one 14B block: ~350M bf16 weights
    const FileStamp written = stampOf(file);

    const CliRun second = runCli(oneBlockRun(dir.path()));
    QVERIFY2(second.exitCode == 0, qPrintable(second.out));
    const nlohmann::json b = parsedJson(second);
    QVERIFY(!b["weights_written"].get<bool>());
    QVERIFY2(second.err.contains("reused:"), qPrintable(second.err));
    const FileStamp reused = stampOf(file);
    QCOMPARE(reused.inode, written.inode);
    QCOMPARE(reused.modified.tv_sec, written.modified.tv_sec);
    QCOMPARE(reused.modified.tv_nsec, written.modified.tv_nsec);

    for (const nlohmann::json& run : b["runs"]) {
      QVERIFY2(run["completed"].get<bool>(), run["error"].get<std::string>().c_str());
      QCOMPARE(run["inter_shot_overhead_seconds"].size(), std::size_t{1});
    }
    QCOMPARE(b["runs"][1]["policy"].get<std::string>(), std::string("reload"));
    QCOMPARE(b["runs"][1]["dit_loads"].get<int>(), 2);  // the file read for each shot
    QVERIFY(b["reload_over_pinned_overhead"].get<double>() > 0);
    const double share = b["pinned_overhead_share"].get<double>();
    QVERIFY(share > 0 && share < 1);
    QCOMPARE(b["seed_comparison"]["reload_over_pinned_overhead"].get<double>(), 35.5);

    // The header says what the file is: another size, or a file cut short, does not pass for it.
    const cli::BenchDitSize one = cli::parseBenchDitSize("14b-layers:1");
    QCOMPARE(cli::benchDitMismatch(file, one, at::kBFloat16), std::string());
    QVERIFY(!cli::benchDitMismatch(file, cli::parseBenchDitSize("14b-layers:2"), at::kBFloat16).empty());
    QVERIFY(!cli::benchDitMismatch(file, one, at::kFloat).empty());
    const std::filesystem::path cut = std::filesystem::path(dir.path().toStdString()) / "cut.safetensors";
    std::filesystem::copy_file(file, cut);
    std::filesystem::resize_file(cut, std::filesystem::file_size(file) - 2);
    QVERIFY(!cli::benchDitMismatch(cut, one, at::kBFloat16).empty());
  }

  void sizesAndTheirOptionsAreChecked() {
    QCOMPARE(cli::parseBenchDitSize("14b-layers:3").config.numLayers, std::int64_t{3});
    QCOMPARE(cli::parseBenchDitSize("14b-layers:3").config.dim, std::int64_t{5120});
    QCOMPARE(cli::parseBenchDitSize("1.3b").config.numLayers, std::int64_t{30});
    for (const char* bad : {"14b-layers:0", "14b-layers:41", "14b-layers:2x", "7b"}) {
      const CliRun run = runCli({"bench", "residency", "--size", bad});
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains("--size"), qPrintable(run.err));
    }
    const CliRun both = runCli({"bench", "residency", "--size", "1.3b", "--config", "demo"});
    QCOMPARE(both.exitCode, 2);
    const CliRun alone = runCli({"bench", "residency", "--config", "demo", "--weights-dir", "/nowhere"});
    QCOMPARE(alone.exitCode, 2);
    QVERIFY2(alone.err.contains("--weights-dir goes with --size"), qPrintable(alone.err));
  }
};

SHOTCHAIN_TEST(CliBenchResidencySize, Core)
#include "test_cli_bench_residency_size.moc"
