#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <filesystem>

#include <ATen/ATen.h>

#include "cli_run.h"
#include "io/safetensors_reader.h"
#include "raw_pt.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

QString golden(const char* name) {
  return QString::fromStdString((std::filesystem::path(SHOTCHAIN_GOLDEN_DIR) / name).string());
}

}  // namespace

class CliConvert : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString out(const char* name) const { return dir_.filePath(name); }

 private Q_SLOTS:
  void convertsTheChosenStateDict() {
    const CliRun run =
        runCli({"convert", golden("wan_dit_tiny_nested.pt"), out("ema.safetensors"), "--key", "generator_ema"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    QVERIFY2(run.out.contains("69 tensors of \"generator_ema\", prefix stripped: model."), qPrintable(run.out));
    const auto copy = io::SafetensorsFile::open(out("ema.safetensors").toStdString());
    const auto twin = io::SafetensorsFile::open(golden("wan_dit_tiny.safetensors").toStdString());
    QCOMPARE(copy->header().tensors.size(), twin->header().tensors.size());
    QCOMPARE(copy->header().metadata.at("state_dict"), std::string("generator_ema"));
    for (const auto& entry : twin->header().tensors)
      QVERIFY2(at::equal(copy->tensor(entry.name), twin->tensor(entry) * 0.5), entry.name.c_str());
  }

  void topLevelStateDictIsByteForByteTheTwin() {
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny_state.pt"), out("state.safetensors")}).exitCode, 0);
    const auto copy = io::SafetensorsFile::open(out("state.safetensors").toStdString());
    const auto twin = io::SafetensorsFile::open(golden("wan_dit_tiny.safetensors").toStdString());
    for (const auto& entry : twin->header().tensors) {
      const std::string_view a = copy->rawBytes(*copy->find(entry.name)), b = twin->rawBytes(entry);
      QVERIFY2(a == b, entry.name.c_str());
    }
    const CliRun again = runCli({"convert", golden("wan_dit_tiny_state.pt"), out("state.safetensors")});
    QCOMPARE(again.exitCode, 1);
    QVERIFY2(again.err.contains("exists; give another file or --force"), qPrintable(again.err));

    // OUT a link to IN: refused even with --force, IN left as it was.
    const QString in = out("in.pt");
    QVERIFY(QFile::copy(golden("wan_dit_tiny_state.pt"), in));
    QVERIFY(QFile::link(in, out("link.safetensors")));
    const QByteArray before = [&] {
      QFile f(in);
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    const CliRun onto = runCli({"convert", in, out("link.safetensors"), "--force"});
    QCOMPARE(onto.exitCode, 1);
    QVERIFY2(onto.err.contains("is a file this command reads: it is never written over"), qPrintable(onto.err));
    QFile after(in);
    QVERIFY(after.open(QIODevice::ReadOnly) && after.readAll() == before);
  }

  void chunkMakesACausalModel() {
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny_nested.pt"), out("causal.safetensors"), "--chunk", "3"}).exitCode,
             0);
    const CliRun run = runCli({"inspect", out("causal.safetensors")});
    QVERIFY2(run.out.contains("causal, chunk 3"), qPrintable(run.out));
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny_nested.pt"), out("none.safetensors"), "--chunk", "0"}).exitCode,
             2);
    // A chunk no clip has: once accepted and planned as fitting with a KV cache of 16,777,216 TiB.
    const CliRun huge = runCli(
        {"convert", golden("wan_dit_tiny_nested.pt"), out("huge.safetensors"), "--chunk", "9223372036854775807"});
    QCOMPARE(huge.exitCode, 2);
    QVERIFY2(huge.err.contains("--chunk: 9223372036854775807 must be from 1 to 257"), qPrintable(huge.err));
    QVERIFY(!QFile::exists(out("huge.safetensors")));
  }

  void refusalsSayWhy() {
    const CliRun legacy = runCli({"convert", golden("wan_dit_tiny_legacy.pt"), out("legacy.safetensors")});
    QCOMPARE(legacy.exitCode, 1);
    QVERIFY2(legacy.err.contains("legacy (non-zip) PyTorch pickle"), qPrintable(legacy.err));
    QVERIFY(!QFile::exists(out("legacy.safetensors")));
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny_state.pt"), out("x.bin")}).exitCode, 2);
  }

  void theDitOfACheckpointMatchesTheOfficialOutputs() {
    const CliRun run = runCli({"verify", golden("wan_dit_tiny_nested.pt"), golden("wan_dit_tiny_io.safetensors")});
    QVERIFY2(run.exitCode == 0 && run.out.contains("0 failed: PASS"), qPrintable(run.out));
  }

  // 3000 views of one 64 KiB storage: once a 190 MiB output from a checkpoint of a few hundred KiB, every view copied;
  // now refused before anything is written.
  void viewsOfOneStorageAreNotMultiplied() {
    using namespace testing::pickle;
    std::vector<std::pair<std::string, std::string>> views;
    for (int i = 0; i < 3000; ++i)
      views.emplace_back("v" + std::to_string(i), tensor("FloatStorage", "0", 16384, 0, {16384}, {1}));
    QFile file(out("views.pt"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    const std::string archive = testing::ptArchive(dictPickle(views), {{"0", std::string(16384 * 4, '\0')}});
    file.write(archive.data(), static_cast<qint64>(archive.size()));
    file.close();
    const CliRun run = runCli({"convert", out("views.pt"), out("views.safetensors")});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("would write") && run.err.contains("refused past 4 times"), qPrintable(run.err));
    QVERIFY(!QFile::exists(out("views.safetensors")));
  }

  void inspectListsStateDicts() {
    const CliRun run = runCli({"inspect", golden("wan_dit_tiny_nested.pt")});
    QVERIFY2(run.out.contains("state dicts: generator (69 tensors) [described] generator_ema (69 tensors)"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("values: step=int 1234 note=str \"tiny\""), qPrintable(run.out));
    QVERIFY2(run.out.contains("family: wan2.1 DiT"), qPrintable(run.out));
    QVERIFY2(run.out.contains("(1 file, "), qPrintable(run.out));
  }
};

SHOTCHAIN_TEST(CliConvert, Core)
#include "test_cli_convert.moc"
