// One owner per loaded DiT: the slot holds its weights, where they are and the LoRAs merged into them. A move
// takes the LoRAs off (parked weights are the base, nothing of the model stays on the device) and repatch puts
// back the very weights; the residency policy and a pair's expert placement park the same model into one buffer.
#include <QTest>

#include <map>
#include <optional>

#include <ATen/ATen.h>

#include "io/weight_set.h"
#include "memory/device_transfer.h"
#include "memory/expert_residency.h"
#include "memory/memory_planner.h"
#include "memory/memory_probe.h"
#include "memory/model_slot.h"
#include "memory/residency_manager.h"
#include "models/lora/lora_file.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using shotchain::testing::golden;

namespace {

std::unique_ptr<models::VideoDiffusionModel> goldenDit(c10::Device device) {
  const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
  return std::make_unique<models::WanModel>(
      models::WanModel::load(weights, models::WanLoadOptions{at::kFloat, device, models::AttentionImpl::Auto}));
}

std::map<std::string, at::Tensor> weightsOf(const models::VideoDiffusionModel& model) {
  std::map<std::string, at::Tensor> out;
  for (const auto& [name, t] : model.namedParameters()) out[name] = t.clone();
  return out;
}

bool same(const models::VideoDiffusionModel& model, const std::map<std::string, at::Tensor>& weights) {
  for (const auto& [name, t] : model.namedParameters())
    if (!at::equal(t, weights.at(name))) return false;
  return true;
}

std::vector<models::LoraUse> goldenLora(const models::VideoDiffusionModel& model, double strength) {
  models::WeightShapes shapes;
  for (const auto& [name, t] : model.namedParameters()) shapes.emplace_back(name, t.sizes().vec());
  auto file = std::make_shared<const models::LoraFile>(
      models::readLoraFile(golden("lora_tiny.pt"), shapes, model.family(), models::wanLoraLayerAliases()));
  return {{file, strength}};
}

}  // namespace

class ModelSlotTest : public QObject {
  Q_OBJECT

  std::unique_ptr<memory::MemoryProbe> probe_;

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    probe_ = memory::makeCpuMemoryProbe();
  }

  void aMoveTakesTheLorasOffAndRepatchPutsThemBack() {
    memory::ModelSlot slot(&goldenDit, at::kCPU);
    QCOMPARE(slot.place(), memory::ModelSlot::Place::Absent);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, (void)slot.onDevice());
    const std::uint64_t bytes = slot.load();
    QCOMPARE(bytes, slot.bytes());
    const std::map<std::string, at::Tensor> base = weightsOf(slot.onDevice());
    const models::LoraPatchFigures figures = slot.patch(goldenLora(slot.onDevice(), 0.8));
    QVERIFY(figures.weightsPatched > 0);
    QVERIFY(slot.patched());
    const std::map<std::string, at::Tensor> patched = weightsOf(slot.onDevice());
    QVERIFY(!same(slot.onDevice(), base));

    QCOMPARE(slot.park(), bytes);
    QCOMPARE(slot.place(), memory::ModelSlot::Place::Host);
    QVERIFY(!slot.patched());
    QVERIFY(same(*slot.get(), base));  // parked: the base weights, the originals not kept on the device
    QCOMPARE(slot.unpark(), bytes);
    QVERIFY(same(slot.onDevice(), base));
    slot.repatch();
    QVERIFY(same(slot.onDevice(), patched));  // the very weights, bit for bit

    slot.release();
    QCOMPARE(slot.place(), memory::ModelSlot::Place::Absent);
    QVERIFY(slot.get() == nullptr);
    slot.load();
    QVERIFY(same(slot.onDevice(), base));  // read again: the file's weights
    slot.repatch();
    QVERIFY(same(slot.onDevice(), patched));
    slot.unpatch();
    QVERIFY(same(slot.onDevice(), base));
    slot.repatch();  // nothing asked any more
    QVERIFY(same(slot.onDevice(), base));
  }

  void theWayBackInTwoPartsGivesTheSameWeights() {
    auto queue = memory::makeHostTransferQueue();
    memory::ModelSlot slot(&goldenDit, at::kCPU);
    slot.load();
    const std::map<std::string, at::Tensor> base = weightsOf(slot.onDevice());
    const std::uint64_t bytes = slot.park();
    const std::uint64_t first = slot.leadingBytesWithin(bytes / 2);
    QVERIFY(first > 0 && first <= bytes / 2);
    QCOMPARE(slot.startReturn(*queue, bytes / 2), first);
    QCOMPARE(slot.finishReturn(*queue), bytes - first);
    QCOMPARE(slot.place(), memory::ModelSlot::Place::Device);
    QVERIFY(same(slot.onDevice(), base));
    QCOMPARE(slot.stagingAllocations(), 1);
  }

  // The offload policy and a pair's swap move the same low-noise expert: one staging buffer serves both, and an
  // expert coming back between its LoRA'd steps carries its LoRA again.
  void thePolicyAndTheExpertSwapShareOneOwner() {
    memory::ModelSlot low(&goldenDit, at::kCPU), high(&goldenDit, at::kCPU);
    low.load();
    memory::PlanRequest request;
    request.dit = models::wanDitMemory(models::WanConfig::preset("tiny"));
    request.ditDtype = at::kFloat;
    request.vae = models::wanVaeMemory(models::WanVaeConfig::preset("tiny"));
    request.vaeDtype = at::kFloat;
    request.shots = {{16, 3, 8, 8}, {16, 3, 8, 8}};
    request.deviceTotal = 64ull << 30;
    request.margin = 0;
    request.policy = ResidencyPolicy::Offload;
    const memory::MemoryPlan plan = memory::planMemory(request);
    QVERIFY2(plan.fits, plan.reason.c_str());
    memory::ResidencyManager residency(plan, *probe_, low);
    std::map<std::string, at::Tensor> patched;
    {
      memory::ExpertResidencyManager experts(ExpertResidency::Swap, *probe_, low, high);
      QCOMPARE(high.place(), memory::ModelSlot::Place::Host);
      for (int shot = 0; shot < 2; ++shot) {
        residency.beforeShot(shot);
        low.patch(goldenLora(low.onDevice(), 0.5));
        if (patched.empty()) patched = weightsOf(low.onDevice());
        experts.beginShot();
        experts.use(1);
        QCOMPARE(low.place(), memory::ModelSlot::Place::Host);
        QVERIFY(!low.patched());
        QCOMPARE(high.place(), memory::ModelSlot::Place::Device);
        experts.endShot();
        QVERIFY(same(low.onDevice(), patched));
        QVERIFY(experts.shotBytes() > 0);
        residency.beforeDecode(shot, shot == 0);
        QCOMPARE(low.place(), memory::ModelSlot::Place::Host);
        residency.afterShot(shot, shot == 0);
      }
      QCOMPARE(low.stagingAllocations(), 1);  // the swap's and the offload's parking are one buffer
      QCOMPARE(residency.stats().stagingAllocations, 1);
      residency.finish();
      QCOMPARE(low.place(), memory::ModelSlot::Place::Device);
    }
    QCOMPARE(high.place(), memory::ModelSlot::Place::Absent);  // a parked expert is let go with its manager
  }
};

SHOTCHAIN_TEST(ModelSlotTest, Appless)
#include "test_model_slot.moc"
