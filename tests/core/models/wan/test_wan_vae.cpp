#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <filesystem>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "golden_compare.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "memory/counting_cpu_allocator.h"
#include "models/wan/wan_vae.h"
#include "models/wan/wan_vae_memory.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::errorOf;
using shotchain::testing::golden;

namespace {

// A Wan-shaped VAE small enough for CPU tests but with enough channels that activations, not
// fixed overheads, dominate the memory figures.
WanVaeConfig mediumConfig() {
  WanVaeConfig config;
  config.dim = 16;
  return config;
}

struct Measured {
  std::uint64_t peak = 0;
  std::uint64_t estimate = 0;
  double ratio() const { return static_cast<double>(estimate) / static_cast<double>(peak); }
};

}  // namespace

class TestWanVae : public QObject {
  Q_OBJECT

  std::optional<WanVae> tiny_;

  Measured measureDecode(const WanVae& vae, const at::Tensor& latent, const VaeTiling& tiling) {
    VaeDecodeOptions options;
    options.tiling = tiling;
    (void)vae.decode(latent, options);  // warm-up (oneDNN primitive caches)
    const std::uint64_t base = memory::cpuAllocationStats().allocated;
    memory::resetCpuPeak();
    {
      const at::Tensor out = vae.decode(latent, options);
      (void)out;
    }
    Measured m;
    m.peak = memory::cpuAllocationStats().peak - base;
    m.estimate = estimateWanVaeDecode(vae.config(), latent.size(1), latent.size(2), latent.size(3), at::kFloat, tiling)
                     .totalBytes();
    return m;
  }

 private Q_SLOTS:
  void initTestCase() {
    memory::installCountingCpuAllocator();
    if (!std::filesystem::is_directory(SHOTCHAIN_GOLDEN_DIR))
      QFAIL(qPrintable(QString("golden folder missing: %1").arg(SHOTCHAIN_GOLDEN_DIR)));
    tiny_.emplace(WanVae::load(io::WeightSet::open(golden("wan_vae_tiny.safetensors"))));
  }

  void frameRules() {
    WanVaeConfig config;
    QCOMPARE(config.latentFrames(81), std::int64_t{21});
    QCOMPARE(config.pixelFrames(21), std::int64_t{81});
    QCOMPARE(config.spatialFactor(), std::int64_t{8});
    for (const std::int64_t t : {0, 2, 3, 4, 6, 8, 80}) {
      const QString error = errorOf([&] { (void)tiny_->encode(at::zeros({3, t, 16, 16})); });
      QVERIFY2(error.contains("4k+1") && error.contains(QString::number(t)), qPrintable(error));
    }
    QVERIFY(errorOf([&] { (void)tiny_->encode(at::zeros({3, 5, 12, 16})); }).contains("multiples of 8"));
    QVERIFY(errorOf([&] { (void)tiny_->encode(at::zeros({4, 5, 16, 16})); }).contains("[3, T, H, W]"));
    QVERIFY(errorOf([&] { (void)tiny_->decode(at::zeros({8, 2, 2, 2})); }).contains("latent must be [16"));
    const at::Tensor latent = tiny_->encode(at::zeros({3, 13, 16, 24}));
    QCOMPARE(latent.sizes().vec(), (std::vector<std::int64_t>{16, 4, 2, 3}));
    QCOMPARE(tiny_->decode(latent).sizes().vec(), (std::vector<std::int64_t>{3, 13, 16, 24}));
  }

  void configFromShapesAndErrors() {
    QTemporaryDir dir;
    const io::WeightSet weights = io::WeightSet::open(golden("wan_vae_tiny.safetensors"));
    io::NamedTensors tensors;
    for (const io::WeightInfo& info : weights.weights())
      tensors.emplace_back(info.name, weights.load(info.name, at::kFloat));
    // No metadata: the config comes from the shapes.
    const std::filesystem::path bare = std::filesystem::path(dir.path().toStdString()) / "vae.safetensors";
    io::saveSafetensors(bare, tensors);
    const WanVaeDetection detection = detectWanVaeConfig(io::WeightSet::open(bare));
    QVERIFY(detection.problems.empty());
    QCOMPARE(detection.configSource, std::string("tensor shapes"));
    QCOMPARE(detection.config.toJson(), WanVaeConfig::preset("tiny").toJson());
    // A missing tensor is named.
    io::NamedTensors missing;
    for (const auto& [name, tensor] : tensors)
      if (name != "decoder.upsamples.3.time_conv.bias") missing.emplace_back(name, tensor);
    const std::filesystem::path broken = std::filesystem::path(dir.path().toStdString()) / "broken.safetensors";
    io::saveSafetensors(broken, missing, {{"config", WanVaeConfig::preset("tiny").toJson()}});
    const QString error = errorOf([&] { (void)WanVae::load(io::WeightSet::open(broken)); });
    QVERIFY2(error.contains("decoder.upsamples.3.time_conv.bias") && error.contains("broken.safetensors"),
             qPrintable(error));
    // The Wan 2.1 preset's published sizes.
    QCOMPARE(WanVaeConfig::preset("wan21").variant(), std::string("wan2.1"));
    QVERIFY(!errorOf([] { (void)WanVaeConfig::fromJson(R"({"dim": 8, "attn_scales": [0.5]})"); }).isEmpty());
  }

  void decodePrefixAndStream() {
    // golden README §2 prefix property: decoding the first 1 or 2 latent frames gives the first 1 or 5 frames.
    const at::Tensor latent = at::randn({16, 4, 3, 5}, at::detail::createCPUGenerator(7));
    VaeDecodeOptions raw;
    raw.clamp = false;
    const at::Tensor full = tiny_->decode(latent, raw);
    QCOMPARE(full.size(1), std::int64_t{13});
    for (const std::int64_t n : {1, 2}) {
      const at::Tensor prefix = tiny_->decode(latent.narrow(1, 0, n), raw);
      QVERIFY(prefix.size(1) == 1 + 4 * (n - 1));
      QVERIFY(compareTensors(prefix, full.narrow(1, 0, prefix.size(1))).maxAbs <= 1e-6);
    }
    // The push API runs conv2 frame by frame rather than over the clip: equal up to rounding.
    WanVaeDecodeStream stream = tiny_->decodeStream(raw);
    std::vector<at::Tensor> parts;
    for (std::int64_t i = 0; i < 4; ++i) parts.push_back(stream.push(latent.select(1, i)));
    const auto e = compareTensors(at::cat(parts, 1), full);
    std::printf("  pushed vs whole-clip decode: max-abs %.3g rel-L2 %.3g\n", e.maxAbs, e.relL2);
    QVERIFY(e.maxAbs <= 1e-5 && e.relL2 <= 1e-6);
    stream.reset();
    QVERIFY(compareTensors(stream.push(latent.select(1, 0)), full.narrow(1, 0, 1)).maxAbs <= 1e-5);
  }

  void tiledApproximatesFull() {
    // Tiles see less context (the middle attention is global per frame, the convolutions' receptive
    // field is wider than the overlap), so tiled ≠ full. With these random weights the measured
    // rel-L2 is 7.4 % (tile 16, overlap 8) and 14.7 % (tile 12, overlap 4); the bounds below sit
    // just above those figures, and more overlap must not be worse.
    const WanVae vae = WanVae::random(mediumConfig(), 11);
    const at::Tensor latent = at::randn({16, 3, 24, 24}, at::detail::createCPUGenerator(3)) * 0.5;
    VaeDecodeOptions options;
    options.clamp = false;
    const at::Tensor full = vae.decode(latent, options);
    std::vector<double> errors;
    for (const VaeTiling tiling : {VaeTiling{16, 8}, VaeTiling{12, 4}}) {
      options.tiling = tiling;
      const at::Tensor tiled = vae.decode(latent, options);
      QCOMPARE(tiled.sizes(), full.sizes());
      const auto e = compareTensors(tiled, full);
      std::printf("  tiled %lld/%lld vs full: max-abs %.3g rel-L2 %.3g (|full| max %.3g)\n",
                  static_cast<long long>(tiling.tile), static_cast<long long>(tiling.overlap), e.maxAbs, e.relL2,
                  full.abs().max().item<double>());
      errors.push_back(e.relL2);
      QVERIFY2(e.relL2 < (tiling.overlap >= 8 ? 0.09 : 0.17),
               qPrintable(QString("tiled decode differs from full: rel-L2 %1").arg(e.relL2)));
      // Streamed tiled decode delivers the same frames in the same chunks.
      std::vector<std::int64_t> counts;
      vae.decode(
          latent, [&](const at::Tensor& frames, std::int64_t) { counts.push_back(frames.size(1)); }, options);
      QCOMPARE(counts, (std::vector<std::int64_t>{1, 4, 4}));
    }
    QVERIFY(errors[0] < errors[1]);
    // One tile covering the latent is the untiled decode.
    options.tiling = {24, 4};
    QVERIFY(compareTensors(vae.decode(latent, options), full).maxAbs == 0);
  }

  void estimateWithinFifteenPercent() {
    const WanVae vae = WanVae::random(mediumConfig(), 5);
    const at::Tensor latent = at::randn({16, 3, 16, 24}, at::detail::createCPUGenerator(1));
    for (const VaeTiling tiling : {VaeTiling{}, VaeTiling{8, 2}}) {
      const Measured m = measureDecode(vae, latent, tiling);
      std::printf("  decode [16,3,16,24] dim 16 %s: measured peak %.2f MiB, estimate %.2f MiB (%.1f%%)\n",
                  tiling.enabled() ? "tiled 8/2" : "full", static_cast<double>(m.peak) / 1048576.0,
                  static_cast<double>(m.estimate) / 1048576.0, 100.0 * (m.ratio() - 1));
      QVERIFY2(m.ratio() >= 0.85 && m.ratio() <= 1.15,
               qPrintable(QString("estimate %1 vs measured %2").arg(m.estimate).arg(m.peak)));
    }
    // Wider channels at 128x128: the large convolutions go through oneDNN rather than the native
    // unfold path, the other branch of the estimate.
    WanVaeConfig wide;
    wide.dim = 32;
    const WanVae wideVae = WanVae::random(wide, 6);
    const Measured m = measureDecode(wideVae, at::randn({16, 2, 16, 16}, at::detail::createCPUGenerator(2)), {});
    std::printf("  decode [16,2,16,16] dim 32 full: measured peak %.2f MiB, estimate %.2f MiB (%.1f%%)\n",
                static_cast<double>(m.peak) / 1048576.0, static_cast<double>(m.estimate) / 1048576.0,
                100.0 * (m.ratio() - 1));
    QVERIFY2(m.ratio() >= 0.85 && m.ratio() <= 1.15,
             qPrintable(QString("estimate %1 vs measured %2").arg(m.estimate).arg(m.peak)));
  }

  void streamedMemoryDoesNotGrowWithLength() {
    const WanVae vae = WanVae::random(mediumConfig(), 5);
    std::vector<std::uint64_t> peaks;
    for (const std::int64_t latentFrames : {2, 6}) {
      const at::Tensor latent = at::randn({16, latentFrames, 12, 12}, at::detail::createCPUGenerator(2));
      (void)vae.decode(latent.narrow(1, 0, 2), [](const at::Tensor&, std::int64_t) {});
      const std::uint64_t base = memory::cpuAllocationStats().allocated;
      memory::resetCpuPeak();
      vae.decode(latent, [](const at::Tensor&, std::int64_t) {});
      peaks.push_back(memory::cpuAllocationStats().peak - base);
    }
    std::printf("  streamed decode peak: 2 latent frames %.2f MiB, 6 latent frames %.2f MiB\n",
                static_cast<double>(peaks[0]) / 1048576.0, static_cast<double>(peaks[1]) / 1048576.0);
    // Only the (tiny) conv2 output of the latent grows with the clip.
    QVERIFY(static_cast<double>(peaks[1]) <= 1.02 * static_cast<double>(peaks[0]));
  }

  void tilingChosenFromBudget() {
    const WanVaeConfig config;  // Wan 2.1 sizes, 81 frames at 480×832
    const auto full = estimateWanVaeDecode(config, 21, 60, 104, at::kFloat);
    std::printf(
        "  Wan 2.1 decode 81x480x832 fp32: caches %.2f GiB, activations %.2f GiB, clip %.2f GiB, total %.2f GiB\n",
        static_cast<double>(full.cacheBytes) / 1073741824.0, static_cast<double>(full.activationBytes) / 1073741824.0,
        static_cast<double>(full.clipBytes) / 1073741824.0, static_cast<double>(full.totalBytes()) / 1073741824.0);
    QVERIFY(!chooseWanVaeTiling(config, 21, 60, 104, at::kFloat, full.totalBytes()).enabled());
    const std::uint64_t budget = full.totalBytes() / 2;
    const VaeTiling tiling = chooseWanVaeTiling(config, 21, 60, 104, at::kFloat, budget);
    QVERIFY(tiling.enabled());
    QVERIFY(estimateWanVaeDecode(config, 21, 60, 104, at::kFloat, tiling).totalBytes() <= budget);
    const VaeTiling larger{tiling.tile + 1, std::max<std::int64_t>(2, (tiling.tile + 1) / 4)};
    QVERIFY(estimateWanVaeDecode(config, 21, 60, 104, at::kFloat, larger).totalBytes() > budget);
    std::printf("  budget %.2f GiB -> tile %lld, overlap %lld\n", static_cast<double>(budget) / 1073741824.0,
                static_cast<long long>(tiling.tile), static_cast<long long>(tiling.overlap));
    // decode() picks the same tiling from its memoryBudget option (the tiny VAE, a measured run).
    const at::Tensor latent = at::randn({16, 2, 16, 16}, at::detail::createCPUGenerator(4));
    const auto tinyFull = estimateWanVaeDecode(tiny_->config(), 2, 16, 16, at::kFloat);
    VaeDecodeOptions options;
    options.memoryBudget = tinyFull.totalBytes() / 2;
    const VaeTiling chosen = chooseWanVaeTiling(tiny_->config(), 2, 16, 16, at::kFloat, options.memoryBudget);
    QVERIFY(chosen.enabled());
    VaeDecodeOptions explicitTiling;
    explicitTiling.tiling = chosen;
    QVERIFY(compareTensors(tiny_->decode(latent, options), tiny_->decode(latent, explicitTiling)).maxAbs == 0);
  }
};

SHOTCHAIN_TEST(TestWanVae, Appless)
#include "test_wan_vae.moc"
