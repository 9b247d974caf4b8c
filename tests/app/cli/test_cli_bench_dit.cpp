#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "cli_run.h"
#include "test_registry.h"

using namespace shotchain;

namespace {

QJsonObject benchDit(const QStringList& extra) {
  const testing::CliRun run =
      testing::runCli(QStringList{"bench", "dit", "--dim", "256", "--layers", "1", "--heads", "2", "--ffn", "512",
                                  "--tokens", "64", "--repeats", "1", "--json"} +
                          extra,
                      120000);
  if (run.exitCode != 0) qWarning("%s", qPrintable(run.out));
  const QStringList lines = run.out.split('\n', Qt::SkipEmptyParts);
  for (auto line = lines.crbegin(); line != lines.crend(); ++line)
    if (line->startsWith('{')) return QJsonDocument::fromJson(line->toUtf8()).object();
  return {};
}

}  // namespace

// bench dit's memory figures: the process's peak through loading and forwards, the model's share of it and the
// plan's estimate, for weights as floats and kept as stored.
class CliBenchDit : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void memoryFiguresForEachWayOfKeepingWeights() {
    double planFloat = 0;
    for (const QStringList& extra : {QStringList{"--dtype", "float32"}, QStringList{"--dtype", "bfloat16"},
                                     QStringList{"--dtype", "bfloat16", "--quant", "fp8"},
                                     QStringList{"--dtype", "bfloat16", "--quant", "Q8_0"}}) {
      const QJsonObject r = benchDit(extra);
      QVERIFY2(!r.isEmpty(), qPrintable(extra.join(' ')));
      QCOMPARE(r["device"].toString(), QString("cpu"));
      const double peak = r["peak_rss_bytes"].toDouble(), before = r["resident_before_model_bytes"].toDouble();
      const double model = r["model_peak_bytes"].toDouble(), plan = r["plan_bytes"].toDouble();
      QVERIFY2(before > 0 && peak >= before, qPrintable(extra.join(' ')));
      QCOMPARE(model, peak - before);
      QVERIFY2(r["live_tensor_peak_bytes"].toDouble() > 0, qPrintable(extra.join(' ')));
      QVERIFY2(plan > 0, qPrintable(extra.join(' ')));
      if (extra.contains("float32")) planFloat = plan;
      if (extra.contains("fp8")) QVERIFY(r["dtype"].toString().contains("scaled fp8"));
      if (extra.contains("Q8_0")) QVERIFY(r["dtype"].toString().contains("Q8_0"));
      if (extra.contains("--quant")) QVERIFY2(plan < planFloat, qPrintable(extra.join(' ')));
    }
  }

  void aDeviceThatIsNotThereIsNamed() {
    const testing::CliRun run = testing::runCli({"bench", "dit", "--device", "cuda:7", "--repeats", "1"}, 60000);
    QVERIFY(run.exitCode != 0);
    QVERIFY2(run.err.contains("cuda:7"), qPrintable(run.err));
    const testing::CliRun typo = testing::runCli({"bench", "dit", "--device", "gpu", "--repeats", "1"}, 60000);
    QVERIFY(typo.exitCode != 0);
    QVERIFY2(typo.err.contains("\"gpu\" is not a device name"), qPrintable(typo.err));
  }
};

SHOTCHAIN_TEST(CliBenchDit, Core)
#include "test_cli_bench_dit.moc"
