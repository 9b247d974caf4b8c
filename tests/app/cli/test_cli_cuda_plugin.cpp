#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <filesystem>

#include "cli_run.h"
#include "test_registry.h"

using namespace shotchain;

namespace {

testing::CliRun cliWith(const QString& cudaSetting, const QStringList& args) {
  QProcess process;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert("SHOTCHAIN_CUDA", cudaSetting);
  process.setProcessEnvironment(environment);
  process.start(SHOTCHAIN_CLI, args);
  const bool finished = process.waitForFinished(60000);
  const QString out = QString::fromUtf8(process.readAllStandardOutput());
  const QString err = QString::fromUtf8(process.readAllStandardError());
  return {finished && process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, out + err, err};
}

bool nvidiaDriverHere() {
  std::error_code error;
  return std::filesystem::exists("/proc/driver/nvidia/version", error) ||
         std::filesystem::exists("/dev/nvidiactl", error);
}

}  // namespace

// A CUDA build keeps libtorch_cuda in a plugin that only a machine with an NVIDIA driver loads.
class CliCudaPlugin : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void loadsWhereThereIsADriverAndOnlyThere() {
    const testing::CliRun run = cliWith("auto", {"version"});
    QCOMPARE(run.exitCode, 0);
    if (!run.out.contains("(CUDA build)")) QSKIP("a CPU build: there is no plugin");
    if (nvidiaDriverHere())
      QVERIFY2(run.out.contains("CUDA plugin: loaded from "), qPrintable(run.out));
    else
      QVERIFY2(run.out.contains("CUDA plugin: not loaded: no NVIDIA driver on this machine"), qPrintable(run.out));
  }

  // Forced without a driver: libtorch's CUDA hooks answer (so the plugin linked and registered them), a CUDA
  // device is refused by name, and the CPU works on.
  void forcedItLoadsAndRegistersLibtorchsCudaHooks() {
    const testing::CliRun version = cliWith("on", {"version"});
    QCOMPARE(version.exitCode, 0);
    if (!version.out.contains("(CUDA build)")) QSKIP("a CPU build: there is no plugin");
    QVERIFY2(version.out.contains(QRegularExpression("CUDA plugin: loaded from .*libshotchain_cuda\\.so "
                                                     "\\(CUDA runtime \\d+\\.\\d+\\)")),
             qPrintable(version.out));
    if (nvidiaDriverHere()) return;
    const testing::CliRun plan =
        cliWith("on", {"bench", "dit", "--config", "tiny", "--tokens", "16", "--repeats", "1"});
    QVERIFY2(plan.exitCode == 0, qPrintable(plan.out));
  }

  void offNeverLoadsIt() {
    const testing::CliRun run = cliWith("off", {"version"});
    QCOMPARE(run.exitCode, 0);
    if (!run.out.contains("(CUDA build)")) QSKIP("a CPU build: there is no plugin");
    QVERIFY2(run.out.contains("CUDA plugin: not loaded: SHOTCHAIN_CUDA=off"), qPrintable(run.out));
  }
};

SHOTCHAIN_TEST(CliCudaPlugin, Core)
#include "test_cli_cuda_plugin.moc"
