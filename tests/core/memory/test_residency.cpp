#include <QTemporaryDir>
#include <QTest>

#include <ATen/ATen.h>

#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "memory/memory_planner.h"
#include "memory/memory_probe.h"
#include "memory/residency_manager.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

constexpr std::uint64_t GiB = 1ull << 30;

memory::PlanRequest tinyRequest(ResidencyPolicy policy, std::optional<std::uint64_t> budget = std::nullopt) {
  memory::PlanRequest r;
  r.dit = models::wanDitMemory(models::WanConfig::preset("tiny"));
  r.ditDtype = at::kFloat;
  r.vae = models::wanVaeMemory(models::WanVaeConfig::preset("tiny"));
  r.vaeDtype = at::kFloat;
  r.textEncoderWeights = 64 * 1024;
  r.shots = {{16, 3, 8, 8}, {16, 3, 8, 8}, {16, 3, 8, 8}};
  r.ringBufferBytes = 16 * 8 * 8 * 4;
  r.deviceTotal = 64 * GiB;
  r.margin = 0;
  r.budget = budget;
  r.policy = policy;
  return r;
}

std::uint64_t parameterBytes(const models::VideoDiffusionModel& m) {
  std::uint64_t bytes = 0;
  for (const auto& [name, t] : m.namedParameters()) bytes += static_cast<std::uint64_t>(t.numel()) * t.element_size();
  return bytes;
}

// The tiny DiT through the interface the residency manager hands out.
at::Tensor forwardOnce(const models::VideoDiffusionModel& m) {
  at::manual_seed(3);
  const models::WanConfig c = models::WanConfig::preset("tiny");
  const at::Tensor x = at::randn({2, m.latentChannels(), 3, 8, 8});
  const at::Tensor context = at::randn({2, c.textLen, c.textDim});
  return m.forwardBatch(x, at::full({2}, 700.0), context);
}

std::unique_ptr<models::VideoDiffusionModel> tinyDit(std::uint64_t seed, const models::WanLoadOptions& options = {}) {
  return std::make_unique<models::WanModel>(models::WanModel::random(models::WanConfig::preset("tiny"), seed, options));
}

// What the renderer does with one shot, minus the decode itself.
void runShot(memory::ResidencyManager& residency, int shot, bool more, at::Tensor* output = nullptr) {
  residency.beforeShot(shot);
  const at::Tensor y = forwardOnce(residency.dit());
  if (output) *output = y;
  residency.beforeDecode(shot, more);
  residency.afterShot(shot, more);
}

}  // namespace

class ResidencyTest : public QObject {
  Q_OBJECT

  std::unique_ptr<memory::MemoryProbe> probe_;

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    probe_ = memory::makeCpuMemoryProbe();
  }

  void pinnedMovesNothingBetweenShots() {
    const memory::MemoryPlan plan = memory::planMemory(tinyRequest(ResidencyPolicy::Pinned));
    QVERIFY(plan.fits);
    int loads = 0;
    memory::ModelSlot dit(
        [&](c10::Device) {
          ++loads;
          return tinyDit(5);
        },
        at::kCPU);
    memory::ResidencyManager residency(plan, *probe_, dit);
    residency.beforeShot(0);
    probe_->markTransfers();  // after the first load: between shots nothing may move
    const at::Tensor y0 = forwardOnce(residency.dit());
    residency.beforeDecode(0, true);
    residency.afterShot(0, true);
    for (int shot = 1; shot < 4; ++shot) runShot(residency, shot, shot < 3);
    QCOMPARE(probe_->transferredBytes(), std::uint64_t(0));
    QCOMPARE(loads, 1);
    QVERIFY(residency.ditResident());
    QCOMPARE(residency.stats().offloads, 0);
    residency.finish();
    QVERIFY(dit.get() != nullptr);  // pinned keeps the DiT for the next render
  }

  void reloadLoadsTheDiTAgainFromDiskForEveryShot() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "dit.safetensors";
    const models::WanModel original = models::WanModel::random(models::WanConfig::preset("tiny"), 9);
    io::saveSafetensors(file, original.namedParameters(), {{"config", original.config().toJson()}});
    const at::Tensor expected = forwardOnce(original);

    const memory::MemoryPlan plan = memory::planMemory(tinyRequest(ResidencyPolicy::Reload));
    QVERIFY(plan.fits);
    QCOMPARE(plan.chosen, ResidencyPolicy::Reload);
    int loads = 0;
    memory::ModelSlot dit(
        [&](c10::Device) -> std::unique_ptr<models::VideoDiffusionModel> {
          ++loads;
          return std::make_unique<models::WanModel>(models::WanModel::load(io::WeightSet::open(file)));
        },
        at::kCPU);
    memory::ResidencyManager residency(plan, *probe_, dit);
    const std::uint64_t bytes = parameterBytes(original);
    for (int shot = 0; shot < 3; ++shot) {
      probe_->markTransfers();
      residency.beforeShot(shot);
      QCOMPARE(probe_->transferredBytes(), bytes);  // the weights went to the device again
      QVERIFY(at::equal(forwardOnce(residency.dit()), expected));
      residency.beforeDecode(shot, shot < 2);
      QVERIFY(dit.get() == nullptr);  // freed for the decode
      QVERIFY_EXCEPTION_THROWN(residency.dit(), std::logic_error);
      residency.afterShot(shot, shot < 2);
    }
    QCOMPARE(loads, 3);
    QCOMPARE(residency.stats().loads, 3);
    QVERIFY(residency.stats().loadSeconds > 0);
  }

  void offloadRoundTripsTheExactWeightsThroughOneStagingBuffer() {
    const models::WanModel reference = models::WanModel::random(models::WanConfig::preset("tiny"), 11, {at::kBFloat16});
    std::map<std::string, at::Tensor> originals;
    for (const auto& [name, t] : reference.namedParameters()) originals[name] = t.clone();
    const at::Tensor expected = forwardOnce(reference);
    const std::uint64_t bytes = parameterBytes(reference);

    memory::PlanRequest request = tinyRequest(ResidencyPolicy::Offload);
    request.ditDtype = at::kBFloat16;
    const memory::MemoryPlan open = memory::planMemory(request);
    request.budget = open.peakOffload;  // as tight as the plan allows: the accounting must hold throughout
    const memory::MemoryPlan plan = memory::planMemory(request);
    QVERIFY2(plan.fits, plan.reason.c_str());
    QCOMPARE(plan.chosen, ResidencyPolicy::Offload);

    memory::ModelSlot dit(
        [](c10::Device) -> std::unique_ptr<models::VideoDiffusionModel> { throw std::logic_error("no load expected"); },
        at::kCPU, tinyDit(11, {at::kBFloat16}));
    memory::ResidencyManager residency(plan, *probe_, dit);
    for (int shot = 0; shot < 4; ++shot) {
      const bool more = shot < 3;
      residency.beforeShot(shot);
      for (const auto& [name, t] : residency.dit().namedParameters())
        QVERIFY2(at::equal(t, originals.at(name)), name.c_str());
      QVERIFY(at::equal(forwardOnce(residency.dit()), expected));
      residency.beforeDecode(shot, more);
      QVERIFY(!residency.ditResident());
      QVERIFY(residency.reserved() <= plan.limit - plan.margin);
      residency.afterShot(shot, more);
    }
    QCOMPARE(residency.stats().offloads, 4);
    QCOMPARE(residency.stats().restores, 3);
    QCOMPARE(residency.stats().bytesToHost, 4 * bytes);
    QCOMPARE(residency.stats().bytesToDevice, 3 * bytes);
    QCOMPARE(residency.stats().stagingAllocations, 1);  // allocated once, reused by every shot
    residency.finish();                                 // brings the last offload back
    QVERIFY(dit.get() != nullptr);
    for (const auto& [name, t] : dit.get()->namedParameters()) QVERIFY(at::equal(t, originals.at(name)));
  }

  void offloadMovesTwiceTheDiTBytesPerShot() {
    const memory::MemoryPlan plan = memory::planMemory(tinyRequest(ResidencyPolicy::Offload));
    memory::ModelSlot dit([](c10::Device) { return tinyDit(2); }, at::kCPU);
    memory::ResidencyManager residency(plan, *probe_, dit);
    residency.beforeShot(0);
    const std::uint64_t bytes = parameterBytes(*dit.get());
    for (int shot = 0; shot < 3; ++shot) {
      probe_->markTransfers();
      forwardOnce(residency.dit());
      residency.beforeDecode(shot, true);
      residency.afterShot(shot, true);
      residency.beforeShot(shot + 1);  // the way back completes here
      QCOMPARE(probe_->transferredBytes(), 2 * bytes);
    }
    forwardOnce(residency.dit());
    residency.beforeDecode(3, false);
    residency.afterShot(3, false);
    residency.finish();
  }

  void aReservationOverTheBudgetNamesThePolicyThatWouldFit() {
    memory::PlanRequest request = tinyRequest(ResidencyPolicy::Pinned);
    const memory::MemoryPlan open = memory::planMemory(request);
    request.budget = open.peakPinned;
    const memory::MemoryPlan plan = memory::planMemory(request);
    QVERIFY(plan.fits);
    memory::ModelSlot dit([](c10::Device) { return tinyDit(2); }, at::kCPU);
    memory::ResidencyManager residency(plan, *probe_, dit);
    residency.beforeShot(0);
    const QString error = errorOf([&] { residency.reserve("surprise", plan.limit); });
    QVERIFY2(error.contains("memory budget: surprise") && error.contains("under pinned") && error.contains("budget"),
             qPrintable(error));
    QCOMPARE(residency.reserved("surprise"), std::uint64_t(0));
  }

  void anImpossibleBudgetIsRefusedBeforeAnyWork() {
    const memory::MemoryPlan plan = memory::planMemory(tinyRequest(ResidencyPolicy::Auto, 1024));
    QVERIFY(!plan.fits);
    bool loaded = false;
    memory::ModelSlot dit(
        [&](c10::Device) {
          loaded = true;
          return tinyDit(2);
        },
        at::kCPU);
    const QString error = errorOf([&] { memory::ResidencyManager residency(plan, *probe_, dit); });
    QVERIFY2(error.startsWith("memory plan refused before any work: nothing fits"), qPrintable(error));
    QVERIFY(!loaded);
  }
};

SHOTCHAIN_TEST(ResidencyTest, Appless)
#include "test_residency.moc"
