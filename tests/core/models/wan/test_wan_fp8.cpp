// fp8 matmul weights kept as stored (fp8 experts at their stored size, LoRAs beside fp8 layers): the
// golden tiny DiT with its block and text-embedding matmuls quantised to F8_E4M3 with a per-row scale (ComfyUI's
// scaled fp8 layout) gives the same output bit for bit whether it is loaded dequantised or kept at one byte a
// weight, the memory model says what keeping them saves, and a LoRA goes beside the kept layers.
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <filesystem>
#include <map>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/lora/lora_file.h"
#include "models/lora/lora_patcher.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "raw_safetensors.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using namespace shotchain::testing;

namespace {

std::string bytesOf(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<std::size_t>(c.nbytes()));
}

bool quantised(const std::string& name, const at::Tensor& t) {
  return t.dim() == 2 && name.ends_with(".weight") &&
         (name.starts_with("blocks.") || name.starts_with("text_embedding."));
}

// The golden tiny DiT with its quantised weights as F8_E4M3 codes and a float32 `scale_weight` per row.
void writeFloat8Dit(const std::filesystem::path& path) {
  const auto golden = io::SafetensorsFile::open(shotchain::testing::golden("wan_dit_tiny.safetensors"));
  std::vector<RawTensor> tensors;
  for (const auto& entry : golden->header().tensors) {
    const at::Tensor t = golden->tensor(entry.name, at::kFloat);
    std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
    if (!quantised(entry.name, t)) {
      tensors.emplace_back(entry.name, "F32", shape, bytesOf(t));
      continue;
    }
    const at::Tensor scale = t.abs().amax(1, true).clamp_min(1e-8) / 448.0;  // e4m3's largest finite value
    const at::Tensor codes = (t / scale).to(at::kFloat8_e4m3fn).view(at::kByte);
    const std::string layer = entry.name.substr(0, entry.name.size() - 7);
    tensors.emplace_back(entry.name, "F8_E4M3", shape, bytesOf(codes));
    tensors.emplace_back(layer + ".scale_weight", "F32", std::vector<std::int64_t>{shape[0]},
                         bytesOf(scale.reshape({shape[0]})));
  }
  writeFile(
      path,
      rawSafetensors(tensors, golden->header().metadata.count("config")
                                  ? "{\"config\":" + nlohmann::json(golden->header().metadata.at("config")).dump() + "}"
                                  : ""));
}

}  // namespace

class TestWanFloat8 : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path file() const {
    return std::filesystem::path(dir_.path().toStdString()) / "wan_tiny_fp8.safetensors";
  }

 private Q_SLOTS:
  void initTestCase() { writeFloat8Dit(file()); }

  void keptAsStoredIsBitForBitTheDequantisedModel() {
    const io::WeightSet weights = io::WeightSet::open(file());
    QVERIFY(weights.storedAsFloat8("blocks.0.ffn.0.weight"));
    QVERIFY(!weights.storedAsFloat8("head.head.weight"));
    WanLoadOptions dequantised, kept;
    kept.keepQuantised = true;
    const WanModel a = WanModel::load(weights, dequantised), b = WanModel::load(weights, kept);
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    const at::Tensor x = io->tensor("case1.x"), t = io->tensor("case1.t"), context = io->tensor("case1.context");
    const at::Tensor outA = a.forward({x}, t, {context}).at(0), outB = b.forward({x}, t, {context}).at(0);
    QVERIFY(at::equal(outA, outB));
    // Close to the float32 golden output (the quantisation's error, not a bug's).
    QVERIFY((outA - io->tensor("case1.out")).abs().max().item<double>() < 0.5);

    // What keeping them saves, as the memory model predicts it from the header.
    std::int64_t codes = 0;
    for (const auto& [name, value] : b.namedParameters())
      if (value.scalar_type() == at::kFloat8_e4m3fn) codes += value.numel();
    QVERIFY(codes > 0);
    QCOMPARE(a.weightBytes() - b.weightBytes(), wanDitMemory(weights)->keptAsStoredSaving(a.computeDtype()));
    QVERIFY(b.weightBytes() < a.weightBytes());
  }

  // A LoRA on a kept fp8 weight goes beside the layer: the stored codes are never rewritten, the output is
  // the dequantised model's with the LoRA merged (to the compute dtype's rounding), and taking it off gives the
  // base output bit for bit.
  void aLoraGoesBesideAKeptWeight() {
    const io::WeightSet weights = io::WeightSet::open(file());
    WanLoadOptions kept;
    kept.keepQuantised = true;
    WanModel model = WanModel::load(weights, kept), dequantised = WanModel::load(weights, WanLoadOptions{});
    WeightShapes shapes;
    for (const auto& [name, value] : model.namedParameters()) shapes.emplace_back(name, value.sizes().vec());
    const auto lora = std::make_shared<const LoraFile>(
        readLoraFile(golden("lora_tiny.pt"), shapes, model.family(), wanLoraLayerAliases()));
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    const auto run = [&](const WanModel& m) {
      return m.forward({io->tensor("case1.x")}, io->tensor("case1.t"), {io->tensor("case1.context")}).at(0);
    };
    const at::Tensor base = run(model);
    std::map<std::string, at::Tensor> codes;
    for (const auto& [name, value] : model.namedParameters()) codes.emplace(name, value.clone());

    LoraPatcher beside, merged;
    const LoraPatchFigures figures = beside.apply(model, {{lora, 1.0}});
    QVERIFY(figures.weightsPatched > 0);
    merged.apply(dequantised, {{lora, 1.0}});
    for (const auto& [name, value] : model.namedParameters()) QVERIFY2(at::equal(value, codes.at(name)), name.c_str());
    const at::Tensor withLora = run(model), reference = run(dequantised);
    const double change = ((withLora - base).norm() / base.norm()).item<double>();
    const double error = ((withLora - reference).norm() / reference.norm()).item<double>();
    std::printf(
        "  LoRA beside fp8 layers: changes the output by %.3g (rel L2), %.3g from the merged dequantised model\n",
        change, error);
    QVERIFY(change > 1e-2);
    QVERIFY(error < change / 10);
    beside.restore(model);
    QVERIFY(!beside.patched());
    QVERIFY(at::equal(run(model), base));
  }
};

SHOTCHAIN_TEST(TestWanFloat8, Appless)
#include "test_wan_fp8.moc"
