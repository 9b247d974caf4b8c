#include <QTest>

#include <cstdio>
#include <filesystem>
#include <optional>

#include <ATen/ATen.h>

#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_vae.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::golden;

namespace {

// Golden README §6: VAE encode and decode, float32.
constexpr double kMaxAbs = 1e-4;
constexpr double kRelL2 = 2e-5;

}  // namespace

class TestWanVaeGolden : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> io_;
  std::optional<WanVae> vae_;

  void check(const char* what, const at::Tensor& got, const at::Tensor& expected) {
    QVERIFY2(got.sizes() == expected.sizes(),
             qPrintable(QString("%1: shape %2 vs %3")
                            .arg(what, c10::str(got.sizes()).c_str(), c10::str(expected.sizes()).c_str())));
    const auto e = compareTensors(got, expected);
    std::printf("  %-34s max-abs %.3g  rel-L2 %.3g\n", what, e.maxAbs, e.relL2);
    QVERIFY2(e.maxAbs <= kMaxAbs && e.relL2 <= kRelL2,
             qPrintable(QString("%1: max-abs %2, rel-L2 %3").arg(what).arg(e.maxAbs).arg(e.relL2)));
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!std::filesystem::is_directory(SHOTCHAIN_GOLDEN_DIR))
      QFAIL(qPrintable(QString("golden folder missing: %1").arg(SHOTCHAIN_GOLDEN_DIR)));
    for (const char* name : {"wan_vae_tiny.safetensors", "wan_vae_tiny_io.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(golden(name).string().c_str())));
    io_ = io::SafetensorsFile::open(golden("wan_vae_tiny_io.safetensors"));
    const io::WeightSet weights = io::WeightSet::open(golden("wan_vae_tiny.safetensors"));
    const WanVaeDetection detection = detectWanVaeConfig(weights);
    QVERIFY2(detection.problems.empty(), detection.problems.empty() ? "" : detection.problems.front().c_str());
    QCOMPARE(detection.config.variant(), std::string("tiny"));
    vae_.emplace(WanVae::load(weights));
  }

  void configFromShapesMatchesMetadata() {
    // The same detection without the metadata path: shapes alone must give the same config.
    const io::WeightSet weights = io::WeightSet::open(golden("wan_vae_tiny.safetensors"));
    WanVaeConfig fromMeta = detectWanVaeConfig(weights).config;
    QCOMPARE(fromMeta.toJson(), WanVaeConfig::preset("tiny").toJson());
    QCOMPARE(wanVaeParameterSpecs(fromMeta).size(), std::size_t{194});
    QCOMPARE(WanVaeConfig::preset("wan21").parameterCount(), std::uint64_t{126892531});
    QCOMPARE(wanVaeParameterSpecs(WanVaeConfig::preset("wan21")).size(), std::size_t{194});
  }

  void scaleMatchesReference() {
    // mean, std and 1/std as the reference wrapper computes them (float32), bitwise.
    const at::Tensor mean =
        at::tensor(std::vector<double>(kWanVaeLatentMean.begin(), kWanVaeLatentMean.end())).to(at::kFloat);
    const at::Tensor std_ =
        at::tensor(std::vector<double>(kWanVaeLatentStd.begin(), kWanVaeLatentStd.end())).to(at::kFloat);
    QVERIFY(at::equal(mean, io_->tensor("scale_mean")));
    QVERIFY(at::equal(std_, io_->tensor("scale_std")));
    QVERIFY(at::equal(at::reciprocal(std_), io_->tensor("scale_inv_std")));
  }

  void encodeLatent() { check("latent", vae_->encode(io_->tensor("video")), io_->tensor("latent")); }

  void encodeMuRaw() { check("mu_raw", vae_->encode(io_->tensor("video"), false), io_->tensor("mu_raw")); }

  void decodeUnclamped() {
    VaeDecodeOptions options;
    options.clamp = false;
    check("decoded_unclamped", vae_->decode(io_->tensor("latent"), options), io_->tensor("decoded_unclamped"));
  }

  void decodeClamped() {
    // WanVAE.decode = decoded_unclamped.clamp(-1, 1) (golden README §2).
    check("decoded (clamped)", vae_->decode(io_->tensor("latent")), io_->tensor("decoded_unclamped").clamp(-1, 1));
  }

  void decodeRawMu() {
    VaeDecodeOptions options;
    options.clamp = false;
    options.normalised = false;
    check("decode(mu_raw, raw)", vae_->decode(io_->tensor("mu_raw"), options), io_->tensor("decoded_unclamped"));
  }

  void streamingDeliversFramesInOrder() {
    VaeDecodeOptions options;
    options.clamp = false;
    std::vector<std::int64_t> firsts, counts;
    std::vector<at::Tensor> parts;
    vae_->decode(
        io_->tensor("latent"),
        [&](const at::Tensor& frames, std::int64_t first) {
          firsts.push_back(first);
          counts.push_back(frames.size(1));
          parts.push_back(frames.clone());
        },
        options);
    QCOMPARE(firsts, (std::vector<std::int64_t>{0, 1, 5}));
    QCOMPARE(counts, (std::vector<std::int64_t>{1, 4, 4}));
    check("streamed decode", at::cat(parts, 1), io_->tensor("decoded_unclamped"));
    // The push API gives the same frames.
    WanVaeDecodeStream stream = vae_->decodeStream(options);
    const at::Tensor latent = io_->tensor("latent");
    std::vector<at::Tensor> pushed;
    for (std::int64_t i = 0; i < latent.size(1); ++i) pushed.push_back(stream.push(latent.narrow(1, i, 1)));
    QCOMPARE(stream.pixelFramesOut(), std::int64_t{9});
    check("pushed decode", at::cat(pushed, 1), io_->tensor("decoded_unclamped"));
  }

  void prefixProperty() {
    // golden README §2: encoding the first 1 or 5 frames gives the first 1 or 2 latent frames.
    const at::Tensor video = io_->tensor("video");
    for (const std::int64_t frames : {1, 5}) {
      const at::Tensor got = vae_->encode(video.narrow(2, 0, frames));
      check(frames == 1 ? "latent[:1] from 1 frame" : "latent[:2] from 5 frames", got,
            io_->tensor("latent").narrow(1, 0, (frames - 1) / 4 + 1));
    }
  }
};

SHOTCHAIN_TEST(TestWanVaeGolden, Appless)
#include "test_wan_vae_golden.moc"
