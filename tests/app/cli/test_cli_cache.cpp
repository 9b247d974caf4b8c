// Step caching as a user runs it: `bench cache` compares the policies side by side, `calibrate-cache`
// writes a file a render then uses, the render prints what its cache did, and a bad calibration file
// is refused before any work, by name.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "models/model_files.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;
using Json = nlohmann::ordered_json;

namespace {

Json demoSequence(int steps) {
  Json doc = Json::parse(R"({"schema": "shotchain.sequence/1", "name": "cache", "fps": 16, "model": "builtin:demo",
    "shots": [
      {"id": "a", "prompt": "a red circle moving right on a black background", "frames": 9, "width": 32, "height": 32,
       "seed": 1, "continuity": {"mode": "none", "tag": "main"}},
      {"id": "b", "prompt": "a red circle moving down on a black background", "frames": 9, "width": 32, "height": 32,
       "seed": 2, "continuity": {"mode": "latent", "tag": "main"}}]})");
  doc["sampler"] = {{"steps", steps}, {"guidance", 4.0}, {"shift", 3.0}, {"solver", "unipc"}};
  return doc;
}

}  // namespace

class CliCache : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path path(const char* name) const { return std::filesystem::path(dir_.path().toStdString()) / name; }
  QString arg(const char* name) const { return QString::fromStdString(path(name).string()); }

 private Q_SLOTS:
  void benchComparesThePoliciesSideBySide() {
    const CliRun run = runCli({"bench", "cache", "--shots", "2", "--steps", "10", "--policies", "easycache,magcache",
                               "--thresholds", "easycache=0.05,0.1;magcache=0.12", "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const Json bench = Json::parse(run.out.left(run.out.size() - run.err.size()).toStdString());
    QCOMPARE(bench["uncached_passes"].get<int>(), 40);
    const Json& runs = bench["runs"];
    QCOMPARE(runs.size(), std::size_t{4});
    QCOMPARE(runs[0]["policy"].get<std::string>(), std::string("off"));
    QCOMPARE(runs[0]["psnr_db"].get<std::string>(), std::string("inf"));  // the reference itself
    for (std::size_t i = 1; i < runs.size(); ++i) {
      QVERIFY2(runs[i]["error"].get<std::string>().empty(), runs[i]["error"].get<std::string>().c_str());
      QVERIFY(runs[i]["dit_passes"].get<int>() < 40);
      QCOMPARE(runs[i]["dit_passes"].get<int>() + runs[i]["skipped_passes"].get<int>(), 40);
      QVERIFY(runs[i]["psnr_db"].get<double>() > 15);
      QVERIFY(runs[i]["ssim"].get<double>() > 0.5 && runs[i]["ssim"].get<double>() < 1.0);
      QVERIFY(runs[i]["cut_flash"].is_number());
    }
    // A higher threshold skips at least as much.
    QVERIFY(runs[2]["dit_passes"].get<int>() <= runs[1]["dit_passes"].get<int>());
  }

  void calibrateThenRenderWithIt() {
    writeFile(path("seq.json"), demoSequence(12).dump(1));
    const CliRun calibrate = runCli({"calibrate-cache", arg("seq.json")});
    QVERIFY2(calibrate.exitCode == 0, qPrintable(calibrate.out));
    QVERIFY(std::filesystem::exists(path("seq.cache.json")));
    const Json calibration = Json::parse(readFile(path("seq.cache.json")));
    QCOMPARE(calibration["steps"].get<int>(), 12);
    QCOMPARE(calibration["magcache_ratios"].size(), std::size_t{24});
    QCOMPARE(calibration["shots"].get<int>(), 2);
    QVERIFY(!std::filesystem::exists(path("seq.render")));  // calibrating renders nothing to disk

    Json doc = demoSequence(12);
    doc["sampler"]["cache"] = {{"policy", "magcache"}, {"threshold", 0.5}, {"calibration", "seq.cache.json"}};
    writeFile(path("cached.json"), doc.dump(1));
    const CliRun render = runCli({"render", arg("cached.json"), "--no-preview"});
    QVERIFY2(render.exitCode == 0, qPrintable(render.out));
    QVERIFY2(render.err.contains("step cache (docs/step-cache.md"), qPrintable(render.err));
    QVERIFY2(render.err.contains("step cache magcache 0.5:"), qPrintable(render.err));
    const Json report = Json::parse(readFile(path("cached.render") / "report.json"));
    QVERIFY(report["shots"][0]["cache"]["skipped_passes"].get<int>() > 0);
    QCOMPARE(report["shots"][0]["cache"]["computed_passes"].get<int>() +
                 report["shots"][0]["cache"]["skipped_passes"].get<int>(),
             24);
  }

  // The calibration never replaces the sequence or a model file it reads (not even with --force), nor an existing
  // file without --force; refused before any sampling, nothing written.
  void theCalibrationNeverReplacesWhatItReads() {
    writeFile(path("own.json"), demoSequence(12).dump(1));
    const std::string document = readFile(path("own.json"));
    const CliRun onto = runCli({"calibrate-cache", arg("own.json"), "--out", arg("own.json"), "--force"});
    QCOMPARE(onto.exitCode, 4);
    QVERIFY2(onto.err.contains("--out: ") && onto.err.contains("is a file this command reads"), qPrintable(onto.err));
    QCOMPARE(readFile(path("own.json")), document);
    const CliRun model =
        runCli({"calibrate-cache", arg("own.json"), "--out",
                QString::fromStdString((shotchain::models::builtinModelDirectory("demo") / "dit.safetensors").string()),
                "--force"});
    QCOMPARE(model.exitCode, 4);
    QVERIFY2(model.err.contains("is a file this command reads"), qPrintable(model.err));
    writeFile(path("taken.json"), "{}");
    const CliRun taken = runCli({"calibrate-cache", arg("own.json"), "--out", arg("taken.json")});
    QCOMPARE(taken.exitCode, 4);
    QVERIFY2(taken.err.contains("taken.json exists; give another file or --force"), qPrintable(taken.err));
    QCOMPARE(readFile(path("taken.json")), std::string("{}"));
  }

  void aBadCalibrationFileIsRefusedBeforeAnyWork() {
    writeFile(path("broken.cache.json"),
              "{\"format\": \"shotchain.cache-calibration/1\", \"steps\": 12, \"magcache_ratios\": [1, 2]}");
    Json doc = demoSequence(12);
    doc["sampler"]["cache"] = {{"policy", "magcache"}, {"calibration", "broken.cache.json"}};
    writeFile(path("broken.json"), doc.dump(1));
    const CliRun render = runCli({"render", arg("broken.json"), "--no-preview"});
    QCOMPARE(render.exitCode, 4);
    QVERIFY2(render.err.contains("sampler.cache.calibration"), qPrintable(render.err));
    QVERIFY2(render.err.contains("broken.cache.json: magcache_ratios: 2 entries; 24 expected"), qPrintable(render.err));
    QVERIFY(!std::filesystem::exists(path("broken.render") / "report.json"));
  }
};

SHOTCHAIN_TEST(CliCache, Core)
#include "test_cli_cache.moc"
