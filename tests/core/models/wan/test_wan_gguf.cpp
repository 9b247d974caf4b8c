// GGUF DiTs kept at their stored size: the golden tiny DiT written as a Q8_0 GGUF file (and a 256-wide random one
// as Q4_K and Q6_K, whose blocks need rows of 256) as llama.cpp's quantiser lays out Wan files gives the same output
// bit for bit whether its blocks are kept or dequantised at load, stays within a stated distance of the float
// model, is planned at its stored size, and takes a LoRA beside its blocks without rewriting them.
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <ATen/ATen.h>

#include "io/ggml_quantise.h"
#include "io/gguf_writer.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/gguf_tensor_types.h"
#include "models/lora/lora_file.h"
#include "models/lora/lora_patcher.h"
#include "models/wan/wan_family.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using namespace shotchain::testing;

namespace {

// Every tensor as the family's GGUF files hold it: the matmuls of the blocks in `type`, the rest F32.
void writeGguf(const std::filesystem::path& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
               io::GgmlType type, std::map<std::string, std::string> metadata = {}) {
  std::vector<io::GgufTensorPlan> plans;
  for (const auto& [name, value] : tensors) {
    const std::vector<std::uint64_t> shape(value.sizes().begin(), value.sizes().end());
    plans.push_back({name, ggufTensorType(&wanDitFamily(), name, shape, type), shape});
  }
  metadata["general.architecture"] = "wan";
  io::GgufWriter writer(metadata, plans);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const at::Tensor values = tensors[i].second.to(at::kFloat).contiguous();
    writer.append(
        io::quantiseGgml({values.data_ptr<float>(), static_cast<std::size_t>(values.numel())}, plans[i].type));
  }
  std::ofstream(path, std::ios::binary) << writer.finish();
}

double relL2(const at::Tensor& a, const at::Tensor& b) { return ((a - b).norm() / b.norm()).item<double>(); }

}  // namespace

class TestWanGguf : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path file(const std::string& name) const {
    return std::filesystem::path(dir_.path().toStdString()) / name;
  }

 private Q_SLOTS:
  void initTestCase() {
    const io::WeightSet golden = io::WeightSet::open(testing::golden("wan_dit_tiny.safetensors"));
    std::vector<std::pair<std::string, at::Tensor>> tensors;
    for (const io::WeightInfo& info : golden.weights())
      tensors.emplace_back(info.name, golden.load(info.name, at::kFloat));
    writeGguf(file("tiny_q8_0.gguf"), tensors, io::GgmlType::Q8_0, {{"config", golden.metadata().at("config")}});
  }

  void theFileIsLaidOutAsLlamaCppLaysOutWan() {
    const io::WeightSet weights = io::WeightSet::open(file("tiny_q8_0.gguf"));
    QVERIFY(weights.storedAsGgml("blocks.0.ffn.0.weight"));
    QVERIFY(weights.storedAsGgml("blocks.1.self_attn.q.weight"));
    for (const char* kept : {"patch_embedding.weight", "text_embedding.0.weight", "time_embedding.0.weight",
                             "time_projection.1.weight", "head.head.weight", "blocks.0.modulation"})
      QVERIFY2(!weights.storedAsGgml(kept) && weights.find(kept)->ggml == io::GgmlType::F32, kept);
    QCOMPARE(weights.find("patch_embedding.weight")->shape.size(), std::size_t{5});
    QVERIFY(detectWanConfig(weights).isWanDit);
  }

  void keptAsStoredIsBitForBitTheDequantisedModel() {
    const io::WeightSet weights = io::WeightSet::open(file("tiny_q8_0.gguf"));
    WanLoadOptions dequantised, kept;
    kept.keepQuantised = true;
    const WanModel a = WanModel::load(weights, dequantised), b = WanModel::load(weights, kept);
    QCOMPARE(a.computeDtype(), at::kBFloat16);
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    const at::Tensor x = io->tensor("case1.x"), t = io->tensor("case1.t"), context = io->tensor("case1.context");
    const at::Tensor outA = a.forward({x}, t, {context}).at(0), outB = b.forward({x}, t, {context}).at(0);
    QVERIFY(at::equal(outA, outB));
    std::int64_t blockBytes = 0;
    for (const auto& [name, value] : b.namedParameters())
      if (value.scalar_type() == at::kByte) blockBytes += value.numel();
    QCOMPARE(static_cast<std::uint64_t>(blockBytes), weights.ggmlBlockBytes());
    QCOMPARE(a.weightBytes() - b.weightBytes(), wanDitMemory(weights)->keptAsStoredSaving(a.computeDtype()));

    // Against the float32 golden output: Q8_0 and a bfloat16 compute cost this much.
    WanLoadOptions f32;
    f32.computeDtype = at::kFloat;
    const double q8 = relL2(WanModel::load(weights, f32).forward({x}, t, {context}).at(0), io->tensor("case1.out"));
    std::printf("  tiny DiT, Q8_0 blocks in float32: rel L2 %.3g to the official output\n", q8);
    QVERIFY(q8 < 0.01);
    QVERIFY(q8 > 1e-6);  // the blocks really are quantised
  }

  void kQuantsOfAWideModel() {
    WanConfig config = WanConfig::preset("tiny");
    config.dim = 256;
    config.ffnDim = 512;
    config.numHeads = 2;
    config.textDim = 48;
    const WanModel reference = WanModel::random(config, 11, WanLoadOptions{at::kFloat});
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    const at::Tensor x = io->tensor("case1.x"), t = io->tensor("case1.t"), context = io->tensor("case1.context");
    const at::Tensor expected = reference.forward({x}, t, {context}).at(0);
    for (const auto& [type, bound] : std::vector<std::pair<io::GgmlType, double>>{
             {io::GgmlType::Q4_K, 0.08}, {io::GgmlType::Q6_K, 0.02}, {io::GgmlType::Q8_0, 0.005}}) {
      const std::string name = std::string(io::ggmlTraits(type).name);
      writeGguf(file("wide.gguf"), reference.namedParameters(), type, {{"config", config.toJson()}});
      const io::WeightSet weights = io::WeightSet::open(file("wide.gguf"));
      QVERIFY2(weights.storedAsGgml("blocks.0.ffn.2.weight"), name.c_str());
      QCOMPARE(weights.find("blocks.0.ffn.2.weight")->ggml, type);
      WanLoadOptions kept{at::kFloat};
      kept.keepQuantised = true;
      const double error = relL2(WanModel::load(weights, kept).forward({x}, t, {context}).at(0), expected);
      std::printf("  256-wide DiT, %s blocks kept, float32 compute: rel L2 %.3g to the float model (bound %.3g)\n",
                  name.c_str(), error, bound);
      QVERIFY2(error < bound, name.c_str());
    }
  }

  // A LoRA on kept blocks goes beside the layer: the blocks are never rewritten, the output is the dequantised
  // model's with the LoRA merged (to the compute dtype's rounding), and taking it off gives the base bit for bit.
  void aLoraGoesBesideKeptBlocks() {
    const io::WeightSet weights = io::WeightSet::open(file("tiny_q8_0.gguf"));
    WanLoadOptions kept;
    kept.keepQuantised = true;
    WanModel model = WanModel::load(weights, kept), dequantised = WanModel::load(weights, WanLoadOptions{});
    WeightShapes shapes;
    for (const auto& [name, value] : dequantised.namedParameters()) shapes.emplace_back(name, value.sizes().vec());
    const auto lora = std::make_shared<const LoraFile>(
        readLoraFile(golden("lora_tiny.pt"), shapes, model.family(), wanLoraLayerAliases()));
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    const auto run = [&](const WanModel& m) {
      return m.forward({io->tensor("case1.x")}, io->tensor("case1.t"), {io->tensor("case1.context")}).at(0);
    };
    const at::Tensor base = run(model);
    std::map<std::string, at::Tensor> stored;
    for (const auto& [name, value] : model.namedParameters()) stored.emplace(name, value.clone());

    LoraPatcher beside, merged;
    QVERIFY(beside.apply(model, {{lora, 1.0}}).weightsPatched > 0);
    merged.apply(dequantised, {{lora, 1.0}});
    for (const auto& [name, value] : model.namedParameters()) QVERIFY2(at::equal(value, stored.at(name)), name.c_str());
    const at::Tensor withLora = run(model), reference = run(dequantised);
    const double change = relL2(withLora, base), error = relL2(withLora, reference);
    std::printf("  LoRA beside Q8_0 blocks: changes the output by %.3g (rel L2), %.3g from the merged model\n", change,
                error);
    QVERIFY(change > 1e-2);
    QVERIFY(error < change / 10);
    beside.restore(model);
    QVERIFY(at::equal(run(model), base));
  }
};

SHOTCHAIN_TEST(TestWanGguf, Appless)
#include "test_wan_gguf.moc"
