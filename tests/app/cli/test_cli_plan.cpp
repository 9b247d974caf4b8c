#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "model_folder.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;

namespace {

using Run = CliRun;

CliRun cli(const QStringList& args) { return runCli(args, 60000); }

}  // namespace

class CliPlan : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString sequence_;

 private Q_SLOTS:
  void initTestCase() {
    const std::filesystem::path root(dir_.path().toStdString());
    makeModelFolder(root);
    writeFile(root / "seq.json",
              sequenceJson(R"({ "folder": "models" })", R"({ "policy": "auto", "budget": "8 GiB" })"));
    sequence_ = dir_.filePath("seq.json");
  }

  void printsThePlanAndTheReason() {
    const Run run = cli({"plan", sequence_, "--device", "cpu"});
    QCOMPARE(run.exitCode, 0);
    for (const char* text : {"dit weights", "vae decode (full)", "peak by policy", "budget 8 GiB", "policy: pinned",
                             "auto chose pinned", "fits"})
      QVERIFY2(run.out.contains(text), qPrintable(run.out));
  }

  void jsonCarriesEveryFigure() {
    const Run run = cli({"plan", sequence_, "--device", "cpu", "--json", "--policy", "offload"});
    QCOMPARE(run.exitCode, 0);
    const nlohmann::json j = nlohmann::json::parse(run.out.toStdString());
    QCOMPARE(j["chosen"].get<std::string>(), std::string("offload"));
    QCOMPARE(j["requested"].get<std::string>(), std::string("offload"));
    QVERIFY(j["fits"].get<bool>());
    QVERIFY(j["dit_weights"].get<std::uint64_t>() > 0);
    QCOMPARE(j["budget"].get<std::uint64_t>(), std::uint64_t(8) << 30);
  }

  void aPlanThatDoesNotFitExitsOne() {
    const Run run = cli({"plan", sequence_, "--device", "cpu", "--device-memory", "64KiB"});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.out.contains("DOES NOT FIT") && run.out.contains("nothing fits"), qPrintable(run.out));
    const Run pinned = cli({"plan", sequence_, "--device", "cpu", "--policy", "pinned", "--device-memory", "64KiB"});
    QCOMPARE(pinned.exitCode, 1);
    QVERIFY2(pinned.out.contains("pinned does not fit"), qPrintable(pinned.out));
  }

  void plansForADeviceThatIsNotHere() {
    const Run run = cli({"plan", sequence_, "--device", "cuda:0", "--device-memory", "4GiB", "--json"});
    QCOMPARE(run.exitCode, 0);
    const nlohmann::json j = nlohmann::json::parse(run.out.toStdString());
    QCOMPARE(j["device_total"].get<std::uint64_t>(), std::uint64_t(4) << 30);
    QCOMPARE(j["limit"].get<std::uint64_t>(), std::uint64_t(4) << 30);
    const Run small = cli({"plan", sequence_, "--device", "cuda:0", "--device-memory", "64KiB"});
    QCOMPARE(small.exitCode, 1);
    QVERIFY2(small.out.contains("DOES NOT FIT"), qPrintable(small.out));
    QCOMPARE(cli({"plan", sequence_, "--device-memory", "plenty"}).exitCode, 2);
  }

  void badArgumentsAreUsageErrors() {
    QCOMPARE(cli({"plan"}).exitCode, 2);
    QCOMPARE(cli({"plan", sequence_, "--policy", "sometimes"}).exitCode, 2);
    QCOMPARE(cli({"plan", sequence_, "--budget", "lots"}).exitCode, 2);
    // The document's smallest budget holds on the command line too (it took 64 KiB before).
    const Run tooSmall = cli({"plan", sequence_, "--budget", "64KiB"});
    QCOMPARE(tooSmall.exitCode, 2);
    QVERIFY2(tooSmall.err.contains("--budget: 64 KiB is below the smallest of 64 MiB"), qPrintable(tooSmall.err));
    const Run missing = cli({"plan", dir_.filePath("absent.json"), "--device", "cpu"});
    QCOMPARE(missing.exitCode, 1);
  }
};

SHOTCHAIN_TEST(CliPlan, Core)
#include "test_cli_plan.moc"
