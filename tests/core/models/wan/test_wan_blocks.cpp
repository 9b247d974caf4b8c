#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

#include <ATen/ATen.h>

#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/attention.h"
#include "models/wan/rope.h"
#include "models/wan/wan_blocks.h"
#include "models/wan/wan_model.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;

using shotchain::testing::errorOf;

namespace {

// softmax(q·kᵀ/√d)·v in float64, keys beyond `keys` dropped, one sample, written out by hand.
at::Tensor naiveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t keys) {
  const at::Tensor qd = q.to(at::kDouble), kd = k.to(at::kDouble).narrow(0, 0, keys),
                   vd = v.to(at::kDouble).narrow(0, 0, keys);
  at::Tensor out = at::zeros(q.sizes(), at::kDouble);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(2)));
  for (std::int64_t h = 0; h < q.size(1); ++h) {
    const at::Tensor logits = at::mm(qd.select(1, h), kd.select(1, h).t()) * scale;
    const at::Tensor weights = at::exp(logits - std::get<0>(logits.max(1, true)));
    out.select(1, h).copy_(at::mm(weights / weights.sum(1, true), vd.select(1, h)));
  }
  return out;
}

}  // namespace

class TestWanBlocks : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void rmsNormByHand() {
    // Row [3, 4]: mean of squares 12.5, so x / sqrt(12.5 + eps) · weight.
    const at::Tensor x = at::tensor({3.0f, 4.0f, 0.0f, 2.0f}).view({2, 2});
    const at::Tensor weight = at::tensor({2.0f, 0.5f});
    const double eps = 1e-6;
    const at::Tensor got = wanRmsNorm(x, weight, eps);
    const float r0 = 1.0f / std::sqrt(12.5f + 1e-6f), r1 = 1.0f / std::sqrt(2.0f + 1e-6f);
    const at::Tensor expected = at::tensor({3 * r0 * 2, 4 * r0 * 0.5f, 0.0f, 2 * r1 * 0.5f}).view({2, 2});
    QVERIFY2(at::allclose(got, expected, 1e-6, 1e-6), c10::str(got).c_str());
    // bf16 in, bf16 out, computed in float32.
    QCOMPARE(wanRmsNorm(x.to(at::kBFloat16), weight, eps).scalar_type(), at::kBFloat16);
    // No weight: qk_norm off, the input passes through.
    QVERIFY(wanRmsNorm(x, at::Tensor(), eps).is_same(x));
  }

  void modulationByHand() {
    const at::Tensor normed = at::tensor({1.0f, 2.0f, -1.0f}).view({1, 1, 3});
    const at::Tensor shift = at::tensor({0.5f, -1.0f, 0.0f}).view({1, 1, 3});
    const at::Tensor scale = at::tensor({1.0f, 0.0f, -0.5f}).view({1, 1, 3});
    // normed · (1 + scale) + shift = [1·2 + 0.5, 2·1 − 1, −1·0.5 + 0]
    const at::Tensor expected = at::tensor({2.5f, 1.0f, -0.5f}).view({1, 1, 3});
    QVERIFY(at::equal(wanModulate(normed, shift, scale), expected));
    // Rows broadcast over tokens: [B, 1, dim] modulation against [B, L, dim] streams.
    const at::Tensor stream = at::ones({2, 5, 3});
    const at::Tensor out = wanModulate(stream, at::zeros({2, 1, 3}), at::full({2, 1, 3}, 2.0f));
    QCOMPARE(out.sizes().vec(), (std::vector<std::int64_t>{2, 5, 3}));
    QVERIFY(at::equal(out, at::full({2, 5, 3}, 3.0f)));
  }

  void ropeSplit() {
    QVERIFY((ropeAxisPairs(128) == std::array<std::int64_t, 3>{22, 21, 21}));
    QVERIFY((ropeAxisPairs(32) == std::array<std::int64_t, 3>{6, 5, 5}));
    QVERIFY((ropeAxisPairs(64) == std::array<std::int64_t, 3>{12, 10, 10}));
  }

  void ropeAgainstHandComputation() {
    // head_dim 12 → pairs 2 (frames, ω = 10000^(-2j/4)), 2 (height, 10000^(-2j/4)), 2 (width).
    const std::int64_t d = 12, f = 2, h = 3, w = 2;
    const at::Tensor x = at::randn({1, f * h * w, 2, d});
    const at::Tensor angles = ropeGridAngles(d, f, h, w);
    const at::Tensor out = ropeApply(x, at::cos(angles).unsqueeze(0), at::sin(angles).unsqueeze(0));
    for (std::int64_t fi = 0; fi < f; ++fi)
      for (std::int64_t hi = 0; hi < h; ++hi)
        for (std::int64_t wi = 0; wi < w; ++wi) {
          const std::int64_t token = (fi * h + hi) * w + wi;
          for (std::int64_t pair = 0; pair < d / 2; ++pair) {
            const std::int64_t axis = pair / 2, j = pair % 2;
            const double position = axis == 0 ? fi : axis == 1 ? hi : wi;
            const double theta = position / std::pow(10000.0, 2.0 * j / 4.0);
            for (std::int64_t head = 0; head < 2; ++head) {
              const double a = x[0][token][head][2 * pair].item<double>(),
                           b = x[0][token][head][2 * pair + 1].item<double>();
              QVERIFY(std::abs(out[0][token][head][2 * pair].item<double>() -
                               (a * std::cos(theta) - b * std::sin(theta))) < 1e-6);
              QVERIFY(std::abs(out[0][token][head][2 * pair + 1].item<double>() -
                               (a * std::sin(theta) + b * std::cos(theta))) < 1e-6);
            }
          }
        }
  }

  void attentionMatchesNaive() {
    const at::Tensor q = at::randn({2, 37, 3, 16}), k = at::randn({2, 41, 3, 16}), v = at::randn({2, 41, 3, 16});
    const std::vector<std::int64_t> lengths{29, 41};
    for (const std::int64_t blockBytes : {std::int64_t{1}, std::int64_t{3 * 41 * 4 * 5}, std::int64_t{256} << 20}) {
      const at::Tensor out = attention(q, k, v, lengths, AttentionImpl::Blocked, blockBytes);
      for (std::int64_t b = 0; b < 2; ++b) {
        const double error =
            (out[b].to(at::kDouble) - naiveAttention(q[b], k[b], v[b], lengths[static_cast<std::size_t>(b)]))
                .abs()
                .max()
                .item<double>();
        QVERIFY2(error < 1e-5, qPrintable(QString("block bytes %1: error %2").arg(blockBytes).arg(error)));
      }
    }
    const double error =
        (attention(q, k, v, lengths, AttentionImpl::Sdpa) - attention(q, k, v, lengths, AttentionImpl::Blocked))
            .abs()
            .max()
            .item<double>();
    QVERIFY(error < 1e-5);
  }

  void parameterCountsMatchThePublishedModels() {
    // wan21.md §1.1: 1.419 B and 14.288 B parameters.
    QCOMPARE(std::llround(WanConfig::preset("1.3b").parameterCount() / 1e6), 1419ll);
    QCOMPARE(std::llround(WanConfig::preset("14b").parameterCount() / 1e6), 14288ll);
    QCOMPARE(WanConfig::preset("1.3b").variant(), std::string("1.3B"));
    QCOMPARE(WanConfig::preset("14b").variant(), std::string("14B"));
    QCOMPARE(WanConfig::preset("tiny").variant(), std::string("tiny"));
  }

  void configJsonRoundTrip() {
    const WanConfig c = WanConfig::preset("tiny");
    const WanConfig back = WanConfig::fromJson(c.toJson());
    QCOMPARE(back.toJson(), c.toJson());
    QVERIFY(errorOf([] { (void)WanConfig::fromJson(R"({"dim": -4})"); }).contains("positive integer"));
  }

  void detectionFromShapesAndRefusals() {
    WanConfig config = WanConfig::preset("tiny");
    config.dim = 256;
    config.numHeads = 2;  // head_dim 128, as every published model
    config.numLayers = 3;
    config.ffnDim = 96;
    const WanModel model = WanModel::random(config, 7);
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "dit.safetensors";
    io::NamedTensors tensors;
    for (const auto& [name, tensor] : model.namedParameters())
      tensors.emplace_back("model.diffusion_model." + name, tensor);
    io::saveSafetensors(path, tensors);  // no config metadata, prefixed keys
    const io::WeightSet weights = io::WeightSet::open(path);
    const WanDetection detection = detectWanConfig(weights);
    QVERIFY(detection.problems.empty());
    QCOMPARE(detection.configSource, std::string("tensor shapes"));
    config.textLen = 512;  // not stored in tensors: the Wan default
    QCOMPARE(detection.config.toJson(), config.toJson());
    QCOMPARE(static_cast<std::size_t>(weights.weights().size()), model.namedParameters().size());
    (void)WanModel::load(weights);

    tensors.emplace_back("model.diffusion_model.blocks.0.cross_attn.k_img.weight", at::zeros({256, 256}));
    io::saveSafetensors(path, tensors);
    const QString message = errorOf([&] { (void)WanModel::load(io::WeightSet::open(path)); });
    QVERIFY2(message.contains("k_img.weight without img_emb.proj.0.weight"), qPrintable(message));

    tensors.pop_back();
    tensors.pop_back();  // drop a needed tensor
    io::saveSafetensors(path, tensors);
    QVERIFY(errorOf([&] { (void)WanModel::load(io::WeightSet::open(path)); }).contains("is missing"));
  }

  void shapesAt1p3BWithOneLayer() {
    WanConfig config = WanConfig::preset("1.3b");
    config.numLayers = 1;
    const WanModel model = WanModel::random(config, 1);
    const at::Tensor x = at::randn({16, 2, 8, 6});
    const auto out = model.forward({x}, at::tensor({500.0f}), {at::randn({20, 4096})});
    QVERIFY(out.at(0).sizes() == x.sizes());
    QVERIFY(at::isfinite(out.at(0)).all().item<bool>());
    QVERIFY(errorOf([&] {
              (void)model.forward({at::randn({16, 2, 7, 6})}, at::tensor({1.0f}), {at::randn({2, 4096})});
            }).contains("multiples of the patch size"));
    QVERIFY(errorOf([&] {
              (void)model.forward({x}, at::tensor({1.0f}), {at::randn({513, 4096})});
            }).contains("context 0"));
  }

  void flopCount() {
    // 1.3B at 1560 tokens: per block 4·2Ld² + 4L²d + 4Ld² + 4Td² + 4LTd + 4Ldf.
    const WanConfig c = WanConfig::preset("1.3b");
    const double L = 1560, d = 1536, T = 512, f = 8960;
    const double block = 8 * L * d * d + 4 * L * L * d + 4 * L * d * d + 4 * T * d * d + 4 * L * T * d + 4 * L * d * f;
    const double flops = wanForwardFlops(c, 1560);
    QVERIFY(flops > 30 * block && flops < 30 * block * 1.05);
  }
};

SHOTCHAIN_TEST(TestWanBlocks, Appless)
#include "test_wan_blocks.moc"
