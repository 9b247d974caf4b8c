// GGUF from the command line: `convert` quantises a DiT into a GGUF file laid out as llama.cpp lays out Wan and
// dequantises one back to safetensors; `inspect --tensors` lists the stored types; `models` recognises .gguf files
// in diffusion_models/ and unet/; `verify` runs a quantised DiT against the float model's outputs, failing at the
// float tolerance and passing at the one stated for its type (Q8_0 on the golden tiny DiT, Q4_K on a 256-wide one).
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>

#include "cli_run.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

QString golden(const char* name) {
  return QString::fromStdString((std::filesystem::path(SHOTCHAIN_GOLDEN_DIR) / name).string());
}

}  // namespace

class CliGguf : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString out(const char* name) const { return dir_.filePath(name); }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const CliRun run = runCli({"convert", golden("wan_dit_tiny.safetensors"), out("tiny.gguf"), "--type", "q8_0"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    QVERIFY2(run.out.contains("Q8_0 ×20"), qPrintable(run.out));
    QVERIFY2(run.out.contains("F32 ×49"), qPrintable(run.out));
  }

  void inspectListsStoredTypes() {
    const CliRun run = runCli({"inspect", out("tiny.gguf"), "--tensors"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    QVERIFY2(run.out.contains("quantisation: GGUF Q8_0"), qPrintable(run.out));
    QVERIFY2(run.out.contains("blocks.0.ffn.0.weight Q8_0 [128, 64]"), qPrintable(run.out));
    QVERIFY2(run.out.contains("patch_embedding.weight F32 [64, 16, 1, 2, 2]"), qPrintable(run.out));
    QVERIFY2(run.out.contains("general.architecture=wan"), qPrintable(run.out));
    QVERIFY2(run.out.contains("problems: none"), qPrintable(run.out));
  }

  void dequantisedBackToSafetensors() {
    const CliRun run = runCli({"convert", out("tiny.gguf"), out("back.safetensors")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    const auto back = io::SafetensorsFile::open(out("back.safetensors").toStdString());
    const io::WeightSet gguf = io::WeightSet::open(out("tiny.gguf").toStdString());
    const auto original = io::SafetensorsFile::open(golden("wan_dit_tiny.safetensors").toStdString());
    QCOMPARE(back->header().tensors.size(), gguf.weights().size());
    for (const io::WeightInfo& info : gguf.weights()) {
      const at::Tensor values = back->tensor(info.name);
      QCOMPARE(values.scalar_type(), at::kFloat);
      QVERIFY2(at::equal(values, gguf.load(info.name, at::kFloat)), info.name.c_str());
      // What stayed F32 comes back exactly; what was quantised does not.
      QCOMPARE(at::equal(values, original->tensor(info.name, at::kFloat)), !gguf.storedAsGgml(info.name));
    }
  }

  void verifyHoldsAQuantisedDitToItsTolerance() {
    const CliRun strict = runCli({"verify", out("tiny.gguf"), golden("wan_dit_tiny_io.safetensors")});
    QVERIFY2(strict.exitCode == 1, qPrintable(strict.out + strict.err));
    const CliRun stated = runCli(
        {"verify", out("tiny.gguf"), golden("wan_dit_tiny_io.safetensors"), "--rel-l2", "0.01", "--max-abs", "0.05"});
    QVERIFY2(stated.exitCode == 0, qPrintable(stated.out + stated.err));
  }

  void verifyAKQuantWideDit() {
    models::WanConfig config = models::WanConfig::preset("tiny");
    config.dim = 256;
    config.ffnDim = 512;
    config.numHeads = 2;
    config.textDim = 48;
    const models::WanModel model = models::WanModel::random(config, 5, models::WanLoadOptions{at::kFloat});
    io::saveSafetensors(out("wide.safetensors").toStdString(), model.namedParameters());
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors").toStdString());
    const at::Tensor x = io->tensor("case1.x"), t = io->tensor("case1.t"), context = io->tensor("case1.context");
    io::saveSafetensors(out("wide_io.safetensors").toStdString(),
                        {{"case1.x", x},
                         {"case1.t", t},
                         {"case1.context", context},
                         {"case1.out", model.forward({x}, t, {context}).at(0)}},
                        {{"source", "ShotChain's float32 WanModel (the file quantised)"}, {"config", config.toJson()}});
    const CliRun convert = runCli({"convert", out("wide.safetensors"), out("wide.gguf"), "--type", "Q4_K"});
    QVERIFY2(convert.exitCode == 0 && convert.out.contains("Q4_K ×"), qPrintable(convert.out + convert.err));
    QVERIFY2(runCli({"verify", out("wide.gguf"), out("wide_io.safetensors")}).exitCode == 1, "Q4_K is not float");
    const CliRun stated =
        runCli({"verify", out("wide.gguf"), out("wide_io.safetensors"), "--rel-l2", "0.08", "--max-abs", "1"});
    QVERIFY2(stated.exitCode == 0, qPrintable(stated.out + stated.err));
  }

  void modelsFindsGgufFilesWhereComfyUiKeepsThem() {
    QDir root(out("models"));
    QVERIFY(root.mkpath("diffusion_models") && root.mkpath("unet"));
    QVERIFY(QFile::copy(out("tiny.gguf"), out("models/diffusion_models/a.gguf")));
    QVERIFY(QFile::copy(out("tiny.gguf"), out("models/unet/b.gguf")));
    const CliRun run = runCli({"models", out("models")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    QVERIFY2(run.out.contains("a.gguf") && run.out.contains("b.gguf"), qPrintable(run.out));
    QVERIFY2(run.out.count("Q8_0") >= 2, qPrintable(run.out));
  }

  void badTypesAreUsageErrors() {
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny.safetensors"), out("x.gguf")}).exitCode, 2);
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny.safetensors"), out("x.gguf"), "--type", "IQ2_XXS"}).exitCode, 2);
    QCOMPARE(runCli({"convert", golden("wan_dit_tiny.safetensors"), out("x.safetensors"), "--type", "Q8_0"}).exitCode,
             2);
    QVERIFY(!QFile::exists(out("x.gguf")));
  }
};

SHOTCHAIN_TEST(CliGguf, Appless)
#include "test_cli_gguf.moc"
