#include <QProcess>
#include <QTest>

#include <cstdio>
#include <filesystem>

#include <ATen/ATen.h>

#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/rope.h"
#include "models/wan/wan_model.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::golden;

namespace {

// Golden README §6: DiT outputs and intermediates, float32.
constexpr double kMaxAbs = 1e-4;
constexpr double kRelL2 = 1e-5;

}  // namespace

class TestWanGolden : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> io_;
  std::optional<WanModel> model_;

  void check(const char* what, const at::Tensor& got, const at::Tensor& expected) {
    QVERIFY2(got.sizes() == expected.sizes(), what);
    const auto e = compareTensors(got, expected);
    std::printf("  %-34s max-abs %.3g  rel-L2 %.3g\n", what, e.maxAbs, e.relL2);
    QVERIFY2(e.maxAbs <= kMaxAbs && e.relL2 <= kRelL2,
             qPrintable(QString("%1: max-abs %2, rel-L2 %3").arg(what).arg(e.maxAbs).arg(e.relL2)));
  }

  std::vector<at::Tensor> runCase(const std::string& c, WanTrace* trace = nullptr) {
    return model_->forward({io_->tensor(c + ".x")}, io_->tensor(c + ".t"), {io_->tensor(c + ".context")}, trace);
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!std::filesystem::is_directory(SHOTCHAIN_GOLDEN_DIR))
      QFAIL(qPrintable(QString("golden folder missing: %1").arg(SHOTCHAIN_GOLDEN_DIR)));
    io_ = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
    const WanDetection detection = detectWanConfig(weights);
    QVERIFY(detection.problems.empty());
    QCOMPARE(detection.configSource, std::string("metadata"));
    QCOMPARE(detection.config.headDim(), std::int64_t{32});
    model_.emplace(WanModel::load(weights, WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto}));
  }

  void ropeTableMatchesReference() {
    const at::Tensor expected = io_->tensor("rope.freqs_first16_real_imag");
    const at::Tensor got = ropeTable(32, 16);
    QVERIFY(got.sizes() == expected.sizes());
    QVERIFY2((got - expected).abs().max().item<double>() <= 1e-15, "RoPE table differs");
  }

  void sinusoidMatchesReference() {
    const at::Tensor got = wanSinusoidalEmbedding(32, io_->tensor("case1.t"));
    QVERIFY2((got - io_->tensor("case1.inter.sinusoidal_t")).abs().max().item<double>() <= 1e-12, "sinusoid differs");
  }

  void case1() { check("case1.out", runCase("case1").at(0), io_->tensor("case1.out")); }
  void case2() { check("case2.out", runCase("case2").at(0), io_->tensor("case2.out")); }

  void batch() {
    const auto out = model_->forward({io_->tensor("case1.x"), io_->tensor("case2.x")},
                                     at::cat({io_->tensor("case1.t"), io_->tensor("case2.t")}),
                                     {io_->tensor("case1.context"), io_->tensor("case2.context")});
    check("batch.out0", out.at(0), io_->tensor("batch.out0"));
    check("batch.out1", out.at(1), io_->tensor("batch.out1"));
  }

  void blockedAttentionPathToo() {
    model_->setAttention(AttentionImpl::Blocked);
    check("case2.out (blocked attention)", runCase("case2").at(0), io_->tensor("case2.out"));
    model_->setAttention(AttentionImpl::Auto);
  }

  void intermediates() {
    WanTrace trace;
    runCase("case1", &trace);
    for (const char* name : {"patch_embedding", "time_embedding", "time_projection", "text_embedding",
                             "blocks.0.self_attn", "blocks.0.cross_attn", "blocks.0.ffn", "blocks.0", "blocks.1"}) {
      QVERIFY2(trace.contains(name), name);
      check(name, trace.at(name), io_->tensor(std::string("case1.inter.") + name));
    }
  }

  void classifierFreeGuidanceBatch() {
    // Same-size batch of 2 (cond/uncond style): equals two single calls.
    const at::Tensor x = io_->tensor("case1.x");
    const at::Tensor ctx = io_->tensor("case1.context");
    const at::Tensor out =
        model_->forwardBatch(at::stack({x, x}), at::tensor({637.0f, 250.0f}), at::stack({ctx, at::zeros_like(ctx)}));
    check("cfg[0] = case1.out", out[0], io_->tensor("case1.out"));
    const at::Tensor single = model_->forward({x}, at::tensor({250.0f}), {at::zeros_like(ctx)}).at(0);
    const auto e = compareTensors(out[1], single);
    QVERIFY2(e.maxAbs <= 1e-5, "batched uncond differs from a single call");
  }

  void verifyVerb() {
    QProcess process;
    process.start(SHOTCHAIN_CLI, {"verify", QString::fromStdString(golden("wan_dit_tiny.safetensors").string()),
                                  QString::fromStdString(golden("wan_dit_tiny_io.safetensors").string())});
    QVERIFY(process.waitForFinished(120000));
    const QString out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
    QVERIFY2(out.contains("case1.out") && out.contains("batch.out1") && out.contains("PASS"), qPrintable(out));
  }
};

SHOTCHAIN_TEST(TestWanGolden, Appless)
#include "test_wan_golden.moc"
