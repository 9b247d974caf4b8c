#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <tuple>

#include <ATen/ATen.h>

#include "golden_compare.h"
#include "io/fp8.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/umt5/umt5.h"
#include "raw_safetensors.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::errorOf;
using shotchain::testing::golden;
using shotchain::testing::q;

namespace {

// Golden README §6: T5 outputs and intermediates, float32.
constexpr double kMaxAbs = 2e-5;
constexpr double kRelL2 = 1e-5;

std::string bytesOf(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {static_cast<const char*>(c.data_ptr()), c.nbytes()};
}

std::vector<std::int64_t> shapeOf(const at::Tensor& t) { return t.sizes().vec(); }

// Round-to-nearest float8_e4m3fn bytes of `values` (NaN codes excluded).
std::string toE4M3(const at::Tensor& values) {
  const auto& table = io::float8E4M3Table();
  at::Tensor codes = at::from_blob(const_cast<float*>(table.data()), {256}, at::kFloat).clone();
  codes.index_put_({0x7F}, std::numeric_limits<float>::infinity());
  codes.index_put_({0xFF}, std::numeric_limits<float>::infinity());
  const at::Tensor flat = values.to(at::kFloat).reshape({-1, 1});
  const at::Tensor index = (flat - codes.unsqueeze(0)).abs().argmin(1).to(at::kByte);
  return bytesOf(index);
}

}  // namespace

class TestUmt5Golden : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> io_;
  std::optional<io::WeightSet> weights_;
  std::optional<Umt5Encoder> model_;
  QTemporaryDir dir_;

  void check(const std::string& what, const at::Tensor& got, const at::Tensor& expected) {
    QVERIFY2(got.sizes() == expected.sizes(), what.c_str());
    const auto e = compareTensors(got, expected);
    std::printf("  %-34s max-abs %.3g  rel-L2 %.3g\n", what.c_str(), e.maxAbs, e.relL2);
    QVERIFY2(e.maxAbs <= kMaxAbs && e.relL2 <= kRelL2,
             qPrintable(QString("%1: max-abs %2, rel-L2 %3").arg(q(what)).arg(e.maxAbs).arg(e.relL2)));
  }

  at::Tensor goldenOut() { return model_->forward(io_->tensor("ids"), io_->tensor("mask")); }

 private Q_SLOTS:
  void initTestCase() {
    for (const char* name : {"umt5_tiny.safetensors", "umt5_tiny_io.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(q(golden(name).string()))));
    io_ = io::SafetensorsFile::open(golden("umt5_tiny_io.safetensors"));
    weights_.emplace(io::WeightSet::open(golden("umt5_tiny.safetensors")));
    model_.emplace(Umt5Encoder::load(*weights_, Umt5LoadOptions{at::kFloat, at::kCPU}));
  }

  void detectsTinyConfig() {
    const Umt5Detection d = detectUmt5Config(*weights_);
    QVERIFY2(d.problems.empty(), d.problems.empty() ? "" : d.problems.front().c_str());
    QVERIFY(d.isUmt5);
    QVERIFY(d.naming == Umt5Naming::Wan);
    QCOMPARE(d.config.vocab, std::int64_t{256});
    QCOMPARE(d.config.dim, std::int64_t{32});
    QCOMPARE(d.config.dimAttn, std::int64_t{32});
    QCOMPARE(d.config.dimFfn, std::int64_t{64});
    QCOMPARE(d.config.numHeads, std::int64_t{2});
    QCOMPARE(d.config.numLayers, std::int64_t{2});
    QCOMPARE(d.config.numBuckets, std::int64_t{32});
    QCOMPARE(d.config.variant(), std::string("tiny"));
    std::uint64_t count = 0;
    for (const auto& [name, t] : model_->namedParameters()) count += static_cast<std::uint64_t>(t.numel());
    QCOMPARE(count, d.config.parameterCount());
    QCOMPARE(model_->namedParameters().size(), std::size_t{22});
    // wan21.md §3.4: umt5-xxl has 5.681 G parameters.
    QCOMPARE(Umt5Config::preset("xxl").parameterCount() / 1000000, std::uint64_t{5680});
    QCOMPARE(Umt5Config::preset("xxl").variant(), std::string("umt5-xxl"));
  }

  void relativeBucketsExact() {
    const at::Tensor rel = io_->tensor("rel_bucket.rel_pos");
    const at::Tensor expected = io_->tensor("rel_bucket.bucket");
    const at::Tensor got = umt5RelativePositionBuckets(rel);
    QCOMPARE(got.scalar_type(), at::kLong);
    QVERIFY2(at::equal(got, expected), "bucket table differs from the reference");
    for (std::int64_t i = 0; i < rel.numel(); ++i)
      QCOMPARE(umt5RelativePositionBucket(rel[i].item<std::int64_t>()), expected[i].item<std::int64_t>());
    // wan21.md §3.3 table edges.
    QCOMPARE(umt5RelativePositionBucket(0), std::int64_t{0});
    QCOMPARE(umt5RelativePositionBucket(-7), std::int64_t{7});
    QCOMPARE(umt5RelativePositionBucket(7), std::int64_t{23});
    QCOMPARE(umt5RelativePositionBucket(-8), std::int64_t{8});
    QCOMPARE(umt5RelativePositionBucket(16), std::int64_t{26});
    QCOMPARE(umt5RelativePositionBucket(64), std::int64_t{30});
    QCOMPARE(umt5RelativePositionBucket(90), std::int64_t{30});
    QCOMPARE(umt5RelativePositionBucket(-91), std::int64_t{15});
    QCOMPARE(umt5RelativePositionBucket(511), std::int64_t{31});
    QCOMPARE(umt5RelativePositionBucket(-100000), std::int64_t{15});
  }

  void positionBias() {
    check("inter.blocks.0.pos_bias", model_->positionBias(0, 12, 12), io_->tensor("inter.blocks.0.pos_bias"));
  }

  void output() { check("out", goldenOut(), io_->tensor("out")); }

  void batchWithMask() {
    check("batch.out", model_->forward(io_->tensor("batch.ids"), io_->tensor("batch.mask")), io_->tensor("batch.out"));
  }

  void intermediates() {
    Umt5Trace trace;
    model_->forward(io_->tensor("ids"), io_->tensor("mask"), &trace);
    for (const char* name : {"blocks.0", "blocks.1", "blocks.0.pos_bias"}) {
      QVERIFY2(trace.contains(name), name);
      check(std::string("inter.") + name, trace.at(name), io_->tensor(std::string("inter.") + name));
    }
  }

  void maskMatters() {
    // Golden README: ignoring the mask changes the real rows by 43 %.
    const at::Tensor unmasked = model_->forward(io_->tensor("ids"));
    const auto e = compareTensors(unmasked.narrow(1, 0, 8), io_->tensor("out").narrow(1, 0, 8));
    QVERIFY2(e.relL2 > 0.1, "the mask has no effect");
  }

  // The shortcut of umt5.cpp: only the real tokens, then zero rows (wan21.md §3.7).
  void encodeShortcut() {
    const std::int64_t n = io_->tensor("seq_len").item<std::int64_t>();
    QCOMPARE(n, std::int64_t{8});
    const at::Tensor ids = io_->tensor("ids")[0].narrow(0, 0, n).contiguous();
    const std::vector<std::int64_t> tokens(ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + n);
    const at::Tensor rows = model_->encode(tokens);
    QCOMPARE(rows.size(0), n);
    check("encode(real tokens) vs out[:8]", rows, io_->tensor("out")[0].narrow(0, 0, n));
    const auto vsPadded = compareTensors(rows, goldenOut()[0].narrow(0, 0, n));
    std::printf("  shortcut vs our padded call: max-abs %.3g\n", vsPadded.maxAbs);
    QVERIFY(vsPadded.maxAbs <= 5e-6);  // float32 summation order only
    // Second sample of the batch: 10 real tokens among 12.
    const at::Tensor ids2 = io_->tensor("batch.ids")[1].narrow(0, 0, 10).contiguous();
    const std::vector<std::int64_t> tokens2(ids2.data_ptr<std::int64_t>(), ids2.data_ptr<std::int64_t>() + 10);
    check("encode(batch row 1) vs batch.out[1,:10]", model_->encode(tokens2),
          io_->tensor("batch.out")[1].narrow(0, 0, 10));
    const at::Tensor padded = model_->encodePadded(tokens, 16);
    QCOMPARE(padded.size(0), std::int64_t{16});
    QVERIFY(at::equal(padded.narrow(0, 0, n), rows));
    QCOMPARE(padded.narrow(0, n, 16 - n).abs().max().item<float>(), 0.0f);
    QVERIFY(!errorOf([&] { model_->encodePadded(tokens, 4); }).isEmpty());
    QVERIFY(!errorOf([&] { model_->encode({}); }).isEmpty());
    QVERIFY(errorOf([&] { model_->encode({1, 256}); }).contains("vocabulary"));
  }

  // ComfyUI / HF naming (wan21.md §3.4): a renamed copy gives the same outputs.
  void huggingFaceNaming() {
    io::NamedTensors renamed;
    for (const auto& [name, t] : model_->namedParameters())
      renamed.emplace_back(umt5StoredName(name, Umt5Naming::HuggingFace), t);
    renamed.emplace_back("encoder.embed_tokens.weight",
                         weights_->load("token_embedding.weight", at::kFloat));  // tied copy
    renamed.emplace_back("spiece_model", at::arange(16, at::kByte));             // embedded tokenizer: not a weight
    const std::filesystem::path path = dir_.filePath("umt5_tiny_hf.safetensors").toStdString();
    io::saveSafetensors(path, renamed);
    const io::WeightSet hf = io::WeightSet::open(path);
    QVERIFY(hf.find("encoder.block.1.layer.1.DenseReluDense.wi_0.weight"));
    QVERIFY(hf.find("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"));
    QVERIFY(hf.find("encoder.final_layer_norm.weight") && hf.find("shared.weight"));
    const Umt5Detection d = detectUmt5Config(hf);
    QVERIFY(d.problems.empty());
    QVERIFY(d.naming == Umt5Naming::HuggingFace);
    const Umt5Encoder model = Umt5Encoder::load(hf, Umt5LoadOptions{at::kFloat, at::kCPU});
    QVERIFY(model.naming() == Umt5Naming::HuggingFace);
    const at::Tensor out = model.forward(io_->tensor("batch.ids"), io_->tensor("batch.mask"));
    QVERIFY2(at::equal(out, model_->forward(io_->tensor("batch.ids"), io_->tensor("batch.mask"))),
             "HF naming gives different outputs");
    check("batch.out (HF naming)", out, io_->tensor("batch.out"));

    // A stray tensor is named in the error.
    renamed.emplace_back("encoder.block.0.layer.0.SelfAttention.extra", at::zeros({2}));
    io::saveSafetensors(path, renamed);
    const QString error = errorOf([&] { Umt5Encoder::load(io::WeightSet::open(path)); });
    QVERIFY2(error.contains("unexpected tensor \"encoder.block.0.layer.0.SelfAttention.extra\""), qPrintable(error));
  }

  void missingAndMisshapenTensorsAreNamed() {
    io::NamedTensors tensors = model_->namedParameters();
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const auto& p) { return p.first == "blocks.1.ffn.fc2.weight"; }),
                  tensors.end());
    const std::filesystem::path path = dir_.filePath("broken.safetensors").toStdString();
    io::saveSafetensors(path, tensors);
    QString error = errorOf([&] { Umt5Encoder::load(io::WeightSet::open(path)); });
    QVERIFY2(error.contains("broken.safetensors") && error.contains("blocks.1.ffn.fc2.weight"), qPrintable(error));
    tensors.emplace_back("blocks.1.ffn.fc2.weight", at::zeros({32, 63}));
    io::saveSafetensors(path, tensors);
    error = errorOf([&] { Umt5Encoder::load(io::WeightSet::open(path)); });
    QVERIFY2(error.contains("\"blocks.1.ffn.fc2.weight\" has shape"), qPrintable(error));
    // Classic T5 (a position-bias table in layer 0 only) is refused by name.
    tensors = model_->namedParameters();
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const auto& p) { return p.first == "blocks.1.pos_embedding.embedding.weight"; }),
                  tensors.end());
    io::saveSafetensors(path, tensors);
    error = errorOf([&] { Umt5Encoder::load(io::WeightSet::open(path)); });
    QVERIFY2(error.contains("classic T5"), qPrintable(error));
    // Decoder tensors of a full T5 checkpoint are ignored.
    tensors = model_->namedParameters();
    tensors.emplace_back("decoder.block.0.layer.0.SelfAttention.q.weight", at::zeros({2, 2}));
    tensors.emplace_back("lm_head.weight", at::zeros({2, 2}));
    io::saveSafetensors(path, tensors);
    QVERIFY(at::equal(
        Umt5Encoder::load(io::WeightSet::open(path), Umt5LoadOptions{at::kFloat, at::kCPU}).forward(io_->tensor("ids")),
        model_->forward(io_->tensor("ids"))));
    // Not a text encoder at all.
    io::saveSafetensors(path, {{"conv.weight", at::zeros({2, 2})}});
    error = errorOf([&] { Umt5Encoder::load(io::WeightSet::open(path)); });
    QVERIFY2(error.contains("cannot load as a UMT5 text encoder"), qPrintable(error));
  }

  // ComfyUI's umt5_xxl_fp8_e4m3fn_scaled layout: HF names, Linear weights as F8_E4M3 with a
  // float32 `scale_weight`, a `scaled_fp8` marker; embedding, norms and bias tables unquantised.
  void scaledFp8LoadsThroughIoLayer() {
    std::vector<shotchain::testing::RawTensor> tensors;
    tensors.emplace_back("scaled_fp8", "F8_E4M3", std::vector<std::int64_t>{}, std::string(1, '\0'));
    for (const auto& [name, t] : model_->namedParameters()) {
      const std::string stored = umt5StoredName(name, Umt5Naming::HuggingFace);
      const bool quantised = name.find(".attn.") != std::string::npos || name.find(".ffn.") != std::string::npos;
      if (!quantised) {
        tensors.emplace_back(stored, "F32", shapeOf(t), bytesOf(t));
        continue;
      }
      const float scale = t.abs().max().item<float>() / 448.0f;
      tensors.emplace_back(stored, "F8_E4M3", shapeOf(t), toE4M3(t / scale));
      tensors.emplace_back(stored.substr(0, stored.size() - 7) + ".scale_weight", "F32", std::vector<std::int64_t>{},
                           bytesOf(at::tensor({scale}).reshape({})));
    }
    const std::filesystem::path path = dir_.filePath("umt5_tiny_fp8_e4m3fn_scaled.safetensors").toStdString();
    shotchain::testing::writeFile(path, shotchain::testing::rawSafetensors(tensors));
    const io::WeightSet fp8 = io::WeightSet::open(path);
    QVERIFY2(fp8.quantisation().starts_with("scaled_fp8"), fp8.quantisation().c_str());
    QCOMPARE(fp8.find("encoder.block.0.layer.0.SelfAttention.q.weight")->dtype, io::DType::F8_E4M3);

    const Umt5Encoder asStored = Umt5Encoder::load(fp8);
    QCOMPARE(asStored.computeDtype(), at::kBFloat16);  // fp8 files compute in bf16 by default
    const Umt5Encoder f32 = Umt5Encoder::load(fp8, Umt5LoadOptions{at::kFloat, at::kCPU});
    const at::Tensor expected = io_->tensor("batch.out");
    const at::Tensor mask = io_->tensor("batch.mask");
    const at::Tensor real = mask.to(at::kBool).unsqueeze(-1).expand_as(expected);
    const auto e32 =
        compareTensors(f32.forward(io_->tensor("batch.ids"), mask).masked_select(real), expected.masked_select(real));
    const auto e16 = compareTensors(asStored.forward(io_->tensor("batch.ids"), mask).masked_select(real),
                                    expected.masked_select(real));
    std::printf("  fp8 weights, float32 compute: max-abs %.3g  rel-L2 %.3g (real rows of batch.out)\n", e32.maxAbs,
                e32.relL2);
    std::printf("  fp8 weights, bf16 compute:    max-abs %.3g  rel-L2 %.3g\n", e16.maxAbs, e16.relL2);
    // Dequantised weights equal decode(byte) · scale exactly.
    at::Tensor w;
    for (const auto& [name, t] : f32.namedParameters())
      if (name == "blocks.0.attn.k.weight") w = t;
    QVERIFY(w.defined());
    const auto we = compareTensors(w, weights_->load("blocks.0.attn.k.weight", at::kFloat));
    std::printf("  fp8 weight blocks.0.attn.k: rel-L2 %.3g\n", we.relL2);
    QVERIFY(we.relL2 > 0 && we.relL2 < 0.05);
    QVERIFY2(e32.relL2 < 0.05, qPrintable(QString("fp8 error too large: %1").arg(e32.relL2)));
    QVERIFY2(e16.relL2 < 0.06, qPrintable(QString("fp8+bf16 error too large: %1").arg(e16.relL2)));
  }

  // Load → use → unload: the encoder lets go of every weight tensor.
  void unloadReleasesWeights() {
    std::vector<c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>> weak;
    std::uint64_t heldBytes = 0;
    {
      Umt5Encoder model = Umt5Encoder::load(io::WeightSet::open(golden("umt5_tiny.safetensors")),
                                            Umt5LoadOptions{at::kFloat, at::kCPU});
      QVERIFY(model.isLoaded());
      heldBytes = model.parameterBytes();
      QCOMPARE(heldBytes, model.config().parameterCount() * 4);
      for (int prompt = 0; prompt < 3; ++prompt) model.encode({151, 84, 55, 1});  // used for several prompts
      for (const auto& [name, t] : model.namedParameters()) {
        QVERIFY2(t.storage().use_count() == 1, name.c_str());  // no other tensor shares its storage
        weak.emplace_back(t.getIntrusivePtr());
      }
      for (const auto& w : weak) QVERIFY(!w.expired());
      model.unload();
      QVERIFY(!model.isLoaded());
      QCOMPARE(model.parameterBytes(), std::uint64_t{0});
      QVERIFY(model.namedParameters().empty());
      for (const auto& w : weak) QVERIFY2(w.expired(), "a weight tensor outlived unload()");
      QVERIFY(errorOf([&] { model.encode({1}); }).contains("unload"));
    }
    QCOMPARE(weak.size(), std::size_t{22});
  }

  void verifyVerb() {
    QProcess process;
    process.start(SHOTCHAIN_CLI, {"verify", q(golden("umt5_tiny.safetensors").string()),
                                  q(golden("umt5_tiny_io.safetensors").string())});
    QVERIFY(process.waitForFinished(120000));
    const QString out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
    QVERIFY2(out.contains("UMT5") && out.contains("batch.out") && out.contains("rel_bucket.bucket") &&
                 out.contains("inter.blocks.1") && !out.contains("FAIL"),
             qPrintable(out));
  }
};

SHOTCHAIN_TEST(TestUmt5Golden, Appless)
#include "test_umt5_golden.moc"
