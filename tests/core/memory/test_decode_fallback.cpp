#include <QTest>

#include <ATen/ATen.h>

#include "memory/counting_cpu_allocator.h"
#include "memory/decode_fallback.h"
#include "memory/memory_probe.h"
#include "models/wan/wan_vae.h"
#include "models/wan/wan_vae_memory.h"
#include "runtime/torch_runtime.h"
#include "simulated_device.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

constexpr std::int64_t kFrames = 3, kSide = 16;

std::uint64_t estimate(const models::WanVae& vae, const models::VaeTiling& tiling) {
  return models::estimateWanVaeDecode(vae.config(), kFrames, kSide, kSide, at::kFloat, tiling).totalBytes();
}

}  // namespace

class DecodeFallbackTest : public QObject {
  Q_OBJECT

  std::unique_ptr<memory::MemoryProbe> probe_;
  std::optional<models::WanVae> vae_;
  at::Tensor latent_;

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    probe_ = memory::makeCpuMemoryProbe();
    vae_.emplace(models::WanVae::random(models::WanVaeConfig::preset("tiny"), 4));
    latent_ = at::randn({16, kFrames, kSide, kSide}, at::TensorOptions().dtype(at::kFloat));
  }

  void outOfMemoryAtTheDecodeEndsInTheTiledDecodeOfThePlan() {
    const std::uint64_t full = estimate(*vae_, {});
    const models::VaeTiling tile8{8, 2};
    const std::uint64_t tiled = estimate(*vae_, tile8);
    QVERIFY2(tiled * 1.15 < full * 0.95, qPrintable(QString("tiled %1, full %2").arg(tiled).arg(full)));
    memory::MemoryPlan plan;
    plan.tile = tile8.tile;  // the plan thought the full decode fits; its fallback tile is 8
    plan.tileOverlap = tile8.overlap;
    const at::Tensor reference = vae_->decode(latent_);

    const std::uint64_t ooms = probe_->sample().outOfMemoryEvents;
    memory::DecodeOutcome outcome;
    {
      SimulatedDevice device(static_cast<std::uint64_t>(tiled * 1.15));
      outcome = memory::decodeWithFallback(*vae_, latent_, {}, plan, "cpu", 2);
    }
    QVERIFY(probe_->sample().outOfMemoryEvents > ooms);
    QCOMPARE(outcome.fallbacks.size(), std::size_t(1));
    const memory::MemoryFallback& f = outcome.fallbacks.front();
    QCOMPARE(f.shotIndex, 2);
    QCOMPARE(QString::fromStdString(f.stage), QString("decode"));
    QCOMPARE(QString::fromStdString(f.failed), QString("untiled decode"));
    QCOMPARE(QString::fromStdString(f.chosen), QString("tiled decode (tile 8, overlap 2)"));
    QVERIFY2(f.error.find("out of memory") != std::string::npos, f.error.c_str());
    QVERIFY2(f.message.find("shot 3") != std::string::npos, f.message.c_str());
    QCOMPARE(outcome.tiling.tile, std::int64_t(8));
    QCOMPARE(outcome.video.sizes(), reference.sizes());
    QVERIFY(at::isfinite(outcome.video).all().item<bool>());
  }

  void aTileThatStillDoesNotFitIsHalved() {
    const std::uint64_t tile6 = estimate(*vae_, {6, 2});
    const std::uint64_t tile12 = estimate(*vae_, {12, 3});
    QVERIFY2(tile6 * 1.1 < tile12, qPrintable(QString("tile 6 %1, tile 12 %2").arg(tile6).arg(tile12)));
    memory::MemoryPlan plan;
    plan.tiledDecode = true;
    plan.tile = 12;
    plan.tileOverlap = 3;
    memory::DecodeOutcome outcome;
    {
      SimulatedDevice device(static_cast<std::uint64_t>(tile6 * 1.1));
      outcome = memory::decodeWithFallback(*vae_, latent_, {}, plan, "cpu");
    }
    QCOMPARE(outcome.fallbacks.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(outcome.fallbacks.front().failed), QString("tiled decode (tile 12, overlap 3)"));
    QCOMPARE(QString::fromStdString(outcome.fallbacks.front().chosen), QString("tiled decode (tile 6, overlap 2)"));
    QCOMPARE(outcome.tiling.tile, std::int64_t(6));
    QVERIFY(outcome.video.defined());
  }

  void outOfMemoryAtTheSmallestTileIsAnError() {
    memory::MemoryPlan plan;
    plan.tile = 8;
    plan.tileOverlap = 2;
    QString error;
    {
      SimulatedDevice device(1024);
      error = errorOf([&] { memory::decodeWithFallback(*vae_, latent_, {}, plan, "cpu"); });
    }
    QVERIFY2(error.contains("even with the smallest tile"), qPrintable(error));
  }

  void otherErrorsAreNotTakenForOutOfMemory() {
    memory::MemoryPlan plan;
    const at::Tensor wrong = at::randn({3, kFrames, kSide, kSide});
    const QString error = errorOf([&] { memory::decodeWithFallback(*vae_, wrong, {}, plan, "cpu"); });
    QVERIFY(!error.isEmpty());
    QVERIFY(!error.contains("smallest tile"));
  }
};

SHOTCHAIN_TEST(DecodeFallbackTest, Appless)
#include "test_decode_fallback.moc"
