#include <QFileInfo>
#include <QProcess>
#include <QTest>

#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;

namespace {

using Run = CliRun;

CliRun cli(const QStringList& args) { return runCli(args, 60000); }

}  // namespace

class CliValidate : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void workflowsAreOk() {
    QStringList files;
    for (const char* name : {"demo.json", "demo_prompt_change.json", "wan21_1.3b_five_shots.json",
                             "resolution_change.json", "skyreels_df_continuation.json"})
      files << q(workflow(name).string());
    const Run run = cli(QStringList{"validate"} + files);
    QCOMPARE(run.exitCode, 0);
    for (const QString& file : files) QVERIFY2(run.out.contains(file + ": ok"), qPrintable(run.out));
  }

  void everyErrorIsPrintedAndExitIsOne() {
    QTemporaryDir dir;
    std::string text = readFile(workflow("demo.json"));
    text.replace(text.find("\"frames\": 17"), 12, "\"frames\": 18");
    text.replace(text.find("\"width\": 64"), 11, "\"width\": 65");
    const QString bad = dir.filePath("bad.json");
    writeFile(bad.toStdString(), text);
    const QString good = q(workflow("demo.json").string());
    const Run run = cli({"validate", bad, good});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.out.contains(bad + ": shots[0].frames: 18 is not 4k+1 (try 17 or 21)"), qPrintable(run.out));
    QVERIFY2(run.out.contains(bad + ": shots[0].width: 65 is not a multiple of 16"), qPrintable(run.out));
    QVERIFY2(run.out.contains(good + ": ok"), qPrintable(run.out));
    QVERIFY(!run.out.contains(bad + ": ok"));
  }

  void unknownVerbAndMissingArgumentsAreUsageErrors() {
    QCOMPARE(cli({"frobnicate"}).exitCode, 2);
    QCOMPARE(cli({"validate"}).exitCode, 2);
    const Run help = cli({"help"});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains("validate FILE..."));
  }

  // A number option given something else is refused before any work, naming the option and the text
  // (a usage error: exit 2, as for every verb).
  void badNumbersNameTheOption() {
    QTemporaryDir dir;
    const QString out = dir.filePath("never");
    const struct {
      QStringList args;
      QString message;
    } cases[] = {
        {{"train-demo", "--out", out, "--shape-weight", "heavy"}, "--shape-weight: \"heavy\" is not a number"},
        {{"train-demo", "--out", out, "--dit-steps", "12k"}, "--dit-steps: \"12k\" is not a whole number"},
        {{"train-demo", "--out", out, "--seed", "-3"}, "--seed: \"-3\" is negative"},
        {{"train-demo", "--out", out, "--minutes", "inf"}, "--minutes: \"inf\" is not a finite number"},
        {{"eval-demo", "--samples", "x"}, "--samples: \"x\" is not a whole number"},
        {{"eval-demo", "--chains", "99999999999"}, "--chains: \"99999999999\" is out of range"},
    };
    for (const auto& c : cases) {
      const Run run = cli(c.args);
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains(c.message), qPrintable(run.err));
    }
    QVERIFY(!QFileInfo::exists(out));
  }

  void infoSummarisesTheDemo() {
    const Run run = cli({"info", q(workflow("demo.json").string())});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains("4 shots, 68 frames"), qPrintable(run.out));
    QVERIFY(run.out.contains("builtin:demo"));
  }
};

SHOTCHAIN_TEST(CliValidate, Core)
#include "test_cli_validate.moc"
