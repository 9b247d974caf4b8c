#include <QTest>

#include <cstdio>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>

#include "io/gguf_writer.h"
#include "io/weight_set.h"
#include "memory/counting_cpu_allocator.h"
#include "memory/memory_planner.h"
#include "models/gguf_tensor_types.h"
#include "models/wan/wan_family.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "models/wan/wan_vae_memory.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "util/byte_size.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

constexpr std::uint64_t GiB = 1ull << 30, MiB = 1ull << 20;

// A 1.3B plan at 832×480, 81 frames (21 latent frames, 60×104 latent), CFG batch 2.
memory::PlanRequest wan13bRequest() {
  memory::PlanRequest r;
  r.dit = models::wanDitMemory(models::WanConfig::preset("1.3b"));
  r.ditDtype = at::kBFloat16;
  r.vae = models::wanVaeMemory(models::WanVaeConfig::preset("wan21"));
  r.vaeDtype = at::kFloat;
  r.textEncoderWeights = 11 * GiB;
  r.textEncoderActivations = 300 * MiB;
  r.shots = {{16, 21, 60, 104}, {16, 13, 60, 104}};
  r.ringBufferBytes = 16 * 60 * 104 * 4;
  r.device = "cuda:0";
  r.deviceTotal = 80 * GiB;
  r.margin = 512 * MiB;
  return r;
}

// Measured peak of live CPU tensors during one batched forward, beyond weights and inputs (a model with an image
// embedding: with its features for every image token it has).
std::uint64_t measuredForwardPeak(const models::WanModel& model, std::int64_t frames, std::int64_t h, std::int64_t w) {
  const models::WanConfig& c = model.config();
  const at::Tensor x = at::randn({2, c.inDim, frames, h, w});
  const at::Tensor t = at::full({2}, 500.0);
  const at::Tensor context = at::randn({2, c.textLen, c.textDim});
  const at::Tensor features = c.hasImageEmbedding() ? at::randn({c.imageTokens(), c.imageDim}) : at::Tensor();
  const models::ImageEmbeddingScope scope(model, features);
  const std::uint64_t base = memory::cpuAllocationStats().allocated;
  memory::resetCpuPeak();
  { const at::Tensor y = model.forwardBatch(x, t, context); }
  return memory::cpuAllocationStats().peak - base;
}

}  // namespace

class MemoryPlanTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    memory::installCountingCpuAllocator();
  }

  void weightBytesMatchTheLoadedModels() {
    for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      const models::WanModel dit = models::WanModel::random(models::WanConfig::preset("tiny"), 1, {dtype});
      std::uint64_t bytes = 0;
      for (const auto& [name, t] : dit.namedParameters())
        bytes += static_cast<std::uint64_t>(t.numel()) * t.element_size();
      QCOMPARE(models::wanDitWeightBytes(dit.config(), dtype), bytes);
    }
    const models::WanVae vae = models::WanVae::random(models::WanVaeConfig::preset("tiny"), 1);
    QCOMPARE(models::wanVaeWeightBytes(vae.config(), at::kFloat), vae.weightBytes());
    // Wan 2.1 1.3B: 1.42 B parameters; bf16 matmuls, about 2.7 GiB.
    const std::uint64_t big = models::wanDitWeightBytes(models::WanConfig::preset("1.3b"), at::kBFloat16);
    QVERIFY2(big > 2.6 * GiB && big < 2.9 * GiB, qPrintable(QString::number(big)));
  }

  void ditActivationEstimateIsWithin30PercentOfTheMeasuredPeak() {
    struct Case {
      models::WanConfig config;
      at::ScalarType dtype;
      std::int64_t frames, h, w;
    };
    models::WanConfig a = models::WanConfig::preset("tiny");
    models::WanConfig b = a;
    b.dim = 128;
    b.ffnDim = 512;
    b.numHeads = 4;
    b.textLen = 64;
    models::WanConfig wide = b;  // the FFN sets the peak
    wide.ffnDim = 2048;
    models::WanConfig flf = b;  // FLF2V: 514 rows of image context beside 64 of text
    flf.modelType = "flf2v";
    flf.inDim = 36;
    flf.imageDim = 256;
    flf.imagePositionTokens = 514;
    const Case cases[] = {{a, at::kFloat, 3, 16, 16},       {b, at::kFloat, 5, 32, 32},
                          {b, at::kBFloat16, 3, 24, 32},    {wide, at::kFloat, 3, 16, 16},
                          {wide, at::kBFloat16, 3, 16, 16}, {flf, at::kFloat, 3, 16, 16}};
    std::vector<double> ratios;
    for (const Case& k : cases) {
      const models::WanModel model = models::WanModel::random(k.config, 7, {k.dtype});
      const std::uint64_t measured = measuredForwardPeak(model, k.frames, k.h, k.w);
      const std::int64_t tokens = k.frames * (k.h / 2) * (k.w / 2);
      const std::uint64_t estimate = models::estimateWanDitActivations(k.config, k.dtype, 2, tokens);
      const double ratio = static_cast<double>(estimate) / static_cast<double>(measured);
      qInfo("dim %lld, %lld tokens, %s: estimate %llu, measured %llu, ratio %.3f", static_cast<long long>(k.config.dim),
            static_cast<long long>(tokens), c10::toString(k.dtype), static_cast<unsigned long long>(estimate),
            static_cast<unsigned long long>(measured), ratio);
      ratios.push_back(ratio);
    }
    for (const double ratio : ratios) QVERIFY2(ratio > 0.7 && ratio < 1.3, qPrintable(QString("ratio %1").arg(ratio)));
  }

  void pinnedPlanOfWan13bAddsUp() {
    const memory::MemoryPlan plan = memory::planMemory(wan13bRequest());
    QVERIFY(plan.fits);
    QCOMPARE(plan.chosen, ResidencyPolicy::Pinned);
    QVERIFY(!plan.tiledDecode);
    QCOMPARE(plan.limit, 80 * GiB);
    const std::uint64_t resident = plan.ditWeights + plan.vaeWeights + plan.ringBufferBytes;
    QCOMPARE(plan.peakPinned, std::max({plan.textEncoderPeak + resident, resident + plan.ditActivationPeak,
                                        resident + plan.vaeDecodeFull}));
    QCOMPARE(plan.textEncoderPeak, 11 * GiB + 300 * MiB);
    const auto full =
        models::estimateWanVaeDecode(models::WanVaeConfig::preset("wan21"), 21, 60, 104, at::kFloat).totalBytes();
    QCOMPARE(plan.vaeDecodeFull, full);
    QCOMPARE(plan.chosenPeak(), plan.peakPinned);
    QVERIFY(plan.peakOffload <= plan.peakPinned);
    QCOMPARE(plan.items.size(), std::size_t(8));
    QVERIFY(plan.reason.find("pinned") != std::string::npos);
  }

  // Wan 2.1 I2V / FLF2V: the CLIP encoder is loaded for a shot's pictures beside the resident DiT; when it is the
  // largest thing besides the DiT, it sets the peak, and the plan lists it.
  void imageEncoderIsPlannedBesideTheDit() {
    memory::PlanRequest r = wan13bRequest();
    r.textEncoderWeights = 1 * GiB;
    const memory::MemoryPlan plain = memory::planMemory(r);
    QCOMPARE(plain.imageEncoderPeak, std::uint64_t{0});
    QCOMPARE(plain.items.size(), std::size_t(8));
    r.imageEncoderWeights = 20 * GiB;  // larger than any other phase, to see it set the peak
    r.imageEncoderActivations = 40 * MiB;
    const memory::MemoryPlan plan = memory::planMemory(r);
    const std::uint64_t resident = plan.ditWeights + plan.vaeWeights + plan.ringBufferBytes;
    QCOMPARE(plan.imageEncoderPeak, 20 * GiB + 40 * MiB);
    QCOMPARE(plan.peakPinned, plan.imageEncoderPeak + resident);
    QCOMPARE(plan.peakOffload, plan.imageEncoderPeak + resident);  // the DiT is on the device for it
    QCOMPARE(plan.items.size(), std::size_t(9));
    QCOMPARE(plan.items[1].name, std::string("image encoder"));
    QVERIFY(nlohmann::json::parse(memory::planToJson(plan))["image_encoder_peak"] == plan.imageEncoderPeak);
  }

  // A step cache's residuals are planned with the shot that keeps them: 1.3B at 832x480x81 keeps
  // 32760 tokens x 1536 float32 per tensor, about 192 MiB; first_block keeps two per branch.
  void stepCacheResidualsArePlanned() {
    const memory::MemoryPlan plain = memory::planMemory(wan13bRequest());
    memory::PlanRequest r = wan13bRequest();
    r.shots[0].stepCacheTensors = 2;
    const memory::MemoryPlan cached = memory::planMemory(r);
    const std::uint64_t tensor = std::uint64_t{21 * 30 * 52} * 1536 * 4;
    QCOMPARE(cached.ditActivationPeak - plain.ditActivationPeak, 2 * 2 * tensor);
    QVERIFY(cached.items[3].detail.find("step cache") != std::string::npos);
    r.shots[0].branches = 1;
    QCOMPARE(memory::planMemory(r).ditActivationPeak - plain.ditActivationPeak, 2 * tensor);
  }

  // LoRA-patched copies sit beside the kept base weights, in the DiT's dtype.
  // Wan 2.2 A14B's two experts as QuantStack's GGUF files: Q4_K_M (the value and second FFN matmuls in Q6_K, the rest
  // of the blocks in Q4_K) and Q8_0, embeddings, modulations and head F32 — the header of a file of the real shapes,
  // its data left as a hole, planned tensor by tensor. At Q4_K_M both stay resident on a 24 GB card at 640×352×81
  // (at 832×480×81 the activations and the decode leave room for one expert at a time); at Q8_0 one at a time there;
  // on 80 GB both at 832×480×81.
  void quantisedA14BExperts() {
    QTemporaryDir dir;
    struct Case {
      const char* name;
      io::GgmlType base;
      io::GgmlType valueAndFfn2;
    };
    for (const Case& c : {Case{"Q4_K_M", io::GgmlType::Q4_K, io::GgmlType::Q6_K},
                          Case{"Q8_0", io::GgmlType::Q8_0, io::GgmlType::Q8_0}}) {
      const std::filesystem::path path =
          std::filesystem::path(dir.path().toStdString()) / (std::string("wan2.2_t2v_") + c.name + ".gguf");
      std::vector<io::GgufTensorPlan> plans;
      std::uint64_t blocks = 0;
      for (const auto& [name, shape] : models::wanParameterShapes(models::WanConfig::preset("14b"))) {
        const std::vector<std::uint64_t> dims(shape.begin(), shape.end());
        io::GgmlType type = models::ggufTensorType(&models::wanDitFamily(), name, dims, c.base);
        if (type == c.base && (name.ends_with(".v.weight") || name.ends_with("ffn.2.weight"))) type = c.valueAndFfn2;
        if (io::isBlockQuantised(type)) blocks += io::ggmlBytesOf(type, dims);
        plans.push_back({name, type, dims});
      }
      io::GgufWriter writer({{"general.architecture", "wan"}}, plans);
      {
        std::ofstream file(path, std::ios::binary);
        file << writer.bytesSoFar();
      }
      std::filesystem::resize_file(path, writer.finishedSize());
      const io::WeightSet weights = io::WeightSet::open(path);
      QCOMPARE(weights.ggmlBlockBytes(), blocks);

      memory::PlanRequest r = wan13bRequest();
      r.dit = r.ditHighNoise = models::wanDitMemory(weights);
      r.ditDtype = r.ditHighNoiseDtype = r.dit->loadDtype();
      QCOMPARE(r.ditDtype, at::kBFloat16);
      r.margin.reset();
      // Per tensor: the blocks as stored, every other tensor at the compute dtype (bf16) or float32 as loaded.
      const std::uint64_t expert = models::wanDitWeightBytes(models::WanConfig::preset("14b"), at::kBFloat16) -
                                   r.dit->keptAsStoredSaving(at::kBFloat16);
      for (const std::uint64_t total : {24 * GiB, 80 * GiB})
        for (const auto& shape : {std::array<std::int64_t, 3>{21, 44, 80}, std::array<std::int64_t, 3>{21, 60, 104}}) {
          r.deviceTotal = total;
          r.shots = {{16, shape[0], shape[1], shape[2]}, {16, shape[0], shape[1], shape[2]}};
          for (memory::PlanShot& shot : r.shots) shot.expertRuns = {1, 0};
          const memory::MemoryPlan plan = memory::planMemory(r);
          QCOMPARE(plan.highNoiseExpertWeights, expert);
          std::printf(
              "A14B %s on %s at %lldx%lldx81: experts %s each (blocks %s as stored); %s, %s; peak both %s, "
              "one at a time %s\n",
              c.name, util::formatByteSize(total).c_str(), static_cast<long long>(shape[2] * 8),
              static_cast<long long>(shape[1] * 8), util::formatByteSize(expert).c_str(),
              util::formatByteSize(blocks).c_str(), toString(plan.expertsChosen), toString(plan.chosen),
              util::formatByteSize(plan.peakExpertsResident).c_str(),
              util::formatByteSize(plan.peakExpertsSwapped).c_str());
          QVERIFY2(plan.fits, plan.reason.c_str());
          const bool small = shape[1] == 44, q4 = c.base == io::GgmlType::Q4_K;
          QCOMPARE(plan.expertsChosen,
                   total == 80 * GiB || (q4 && small) ? ExpertResidency::Resident : ExpertResidency::Swap);
        }
      QVERIFY(expert < (c.base == io::GgmlType::Q4_K ? 11 : 17) * GiB);
    }
  }

  void loraPatchedWeightsArePlanned() {
    const memory::MemoryPlan plain = memory::planMemory(wan13bRequest());
    memory::PlanRequest r = wan13bRequest();
    r.shots[0].loraElements = 30 * 4 * 1536 * 1536;  // q, k, v, o of 30 blocks
    const memory::MemoryPlan patched = memory::planMemory(r);
    QCOMPARE(patched.ditActivationPeak - plain.ditActivationPeak, std::uint64_t{30 * 4 * 1536 * 1536} * 2);  // bf16
    QVERIFY(patched.items[3].detail.find("LoRA-patched") != std::string::npos);
  }

  // Wan 2.2 A14B at 1280×720×81: two 14B experts in bf16 (T2V-A14B's experts have Wan 2.1 14B's shapes).
  void twoExpertsA14B() {
    memory::PlanRequest r = wan13bRequest();
    r.dit = r.ditHighNoise = models::wanDitMemory(models::WanConfig::preset("14b"));
    r.ditDtype = r.ditHighNoiseDtype = at::kBFloat16;
    r.shots = {{16, 21, 90, 160}, {16, 21, 90, 160}};
    for (memory::PlanShot& shot : r.shots) shot.expertRuns = {1, 0};
    r.ringBufferBytes = 16 * 90 * 160 * 4;
    r.margin.reset();
    for (const std::uint64_t total : {141 * GiB, 80 * GiB}) {
      r.deviceTotal = total;
      const memory::MemoryPlan plan = memory::planMemory(r);
      std::printf("A14B bf16 on %s: %s, %s; peak both %s, one at a time %s; %s\n", util::formatByteSize(total).c_str(),
                  toString(plan.expertsChosen), toString(plan.chosen),
                  util::formatByteSize(plan.peakExpertsResident).c_str(),
                  util::formatByteSize(plan.peakExpertsSwapped).c_str(), plan.expertReason.c_str());
      QVERIFY2(plan.fits, plan.reason.c_str());
      const bool bothFit = plan.peakExpertsResident + plan.margin <= total;
      QCOMPARE(plan.expertsChosen, bothFit ? ExpertResidency::Resident : ExpertResidency::Swap);
      QVERIFY(plan.peakExpertsResident > plan.peakExpertsSwapped);
      for (const std::uint64_t bytes : plan.expertBytesPerShot)
        QCOMPARE(bytes, bothFit ? std::uint64_t{0} : 4 * plan.highNoiseExpertWeights);  // in, out, and back
    }
    // The fp8 experts (ComfyUI's *_fp8_scaled files) kept at one byte a weight.
    memory::PlanRequest fp8 = r;
    fp8.dit = fp8.ditHighNoise = models::wanDitMemoryFloat8(models::WanConfig::preset("14b"));
    for (const std::uint64_t total : {141 * GiB, 80 * GiB}) {
      fp8.deviceTotal = total;
      const memory::MemoryPlan plan = memory::planMemory(fp8);
      std::printf("A14B fp8 on %s: %s, %s; experts %s each; peak both %s, one at a time %s\n",
                  util::formatByteSize(total).c_str(), toString(plan.expertsChosen), toString(plan.chosen),
                  util::formatByteSize(plan.highNoiseExpertWeights).c_str(),
                  util::formatByteSize(plan.peakExpertsResident).c_str(),
                  util::formatByteSize(plan.peakExpertsSwapped).c_str());
      QVERIFY2(plan.fits, plan.reason.c_str());
      QCOMPARE(plan.expertsChosen, ExpertResidency::Resident);
      QVERIFY(plan.highNoiseExpertWeights <
              memory::planMemory(r).highNoiseExpertWeights * 6 / 10);  // about half the bf16 size
    }
    r.deviceTotal = 141 * GiB;
    r.experts = ExpertResidency::Swap;
    QCOMPARE(memory::planMemory(r).expertBytesPerShot.front(), 4 * memory::planMemory(r).highNoiseExpertWeights);
    r.experts = ExpertResidency::Reload;
    QCOMPARE(memory::planMemory(r).expertBytesPerShot.front(), 2 * memory::planMemory(r).highNoiseExpertWeights);
    r.experts = ExpertResidency::Auto;
    r.budget = 20 * GiB;  // below one expert: refused, naming what would fit
    const memory::MemoryPlan refused = memory::planMemory(r);
    QVERIFY(!refused.fits);
    QVERIFY2(refused.reason.find("neither expert fits alone") != std::string::npos, refused.reason.c_str());
    QVERIFY2(refused.reason.find("needs") != std::string::npos, refused.reason.c_str());
  }

  void budgetsForceEachFallbackInTurn() {
    memory::PlanRequest r = wan13bRequest();
    r.textEncoderWeights = 1 * GiB;  // so that the decode, not the text encoder, sets the pinned peak
    r.textEncoderActivations = 0;
    const memory::MemoryPlan open = memory::planMemory(r);
    const std::uint64_t resident = open.ditWeights + open.vaeWeights + open.ringBufferBytes;
    QVERIFY2(resident + open.vaeDecodeFull > resident + open.ditActivationPeak,
             "the decode must dominate for this test");

    r.budget = open.peakPinned + r.margin.value();  // exactly fits
    memory::MemoryPlan plan = memory::planMemory(r);
    QCOMPARE(plan.chosen, ResidencyPolicy::Pinned);
    QVERIFY(plan.fits && !plan.tiledDecode);

    r.budget = open.peakPinned + r.margin.value() - 1;  // one byte short: tiled decode
    plan = memory::planMemory(r);
    QCOMPARE(plan.chosen, ResidencyPolicy::Pinned);
    QVERIFY(plan.fits && plan.tiledDecode && plan.tile > 0);
    QVERIFY(plan.peakPinnedTiled + plan.margin <= *plan.budget);
    QVERIFY2(plan.reason.find("tiled decode") != std::string::npos, plan.reason.c_str());

    // A large text encoder (UMT5-XXL): encoding beside the resident DiT is what does not fit, at any
    // tile; offload encodes the prompts before the DiT comes to the device.
    r.textEncoderWeights = 11 * GiB;
    const memory::MemoryPlan big = memory::planMemory(r);
    const std::uint64_t withoutDit = big.vaeWeights + big.ringBufferBytes;
    const std::uint64_t sampling = resident + big.ditActivationPeak;
    r.budget =
        std::max({big.textEncoderPeak + withoutDit, sampling, withoutDit + big.vaeDecodeFull}) + r.margin.value();
    QVERIFY(big.textEncoderPeak + resident + r.margin.value() > *r.budget);
    plan = memory::planMemory(r);
    QCOMPARE(plan.chosen, ResidencyPolicy::Offload);
    QVERIFY(plan.fits && !plan.tiledDecode);
    QCOMPARE(plan.peakOffload + plan.margin, *r.budget);
    QVERIFY2(plan.reason.find("auto chose offload") != std::string::npos, plan.reason.c_str());

    r.policy = ResidencyPolicy::Pinned;  // asked for pinned at that budget: refused, naming offload
    plan = memory::planMemory(r);
    QCOMPARE(plan.chosen, ResidencyPolicy::Pinned);
    QVERIFY(!plan.fits);
    QVERIFY2(plan.reason.find("offload would fit") != std::string::npos, plan.reason.c_str());

    r.policy = ResidencyPolicy::Auto;
    r.budget = plan.ditWeights;  // impossible: the DiT alone fills it
    plan = memory::planMemory(r);
    QVERIFY(!plan.fits);
    QVERIFY2(plan.reason.find("nothing fits") != std::string::npos, plan.reason.c_str());
  }

  // Sampling itself (DiT activations of CFG batch 2) over the budget: the plan halves the batch.
  void guidanceSplitsWhenBatchTwoDoesNotFit() {
    memory::PlanRequest r = wan13bRequest();
    r.textEncoderWeights = 1 * GiB;
    r.textEncoderActivations = 0;
    memory::PlanRequest one = r;
    one.cfgBatch = 1;
    const memory::MemoryPlan batch1 = memory::planMemory(one);
    const memory::MemoryPlan batch2 = memory::planMemory(r);
    QVERIFY(!batch1.splitGuidance && !batch2.splitGuidance);
    QVERIFY(batch1.ditActivationPeak < batch2.ditActivationPeak);
    const std::uint64_t resident = batch1.ditWeights + batch1.vaeWeights + batch1.ringBufferBytes;
    r.budget = resident + batch1.ditActivationPeak + r.margin.value();  // sampling at batch 1 just fits, at batch 2 not
    one.budget = r.budget;
    QVERIFY2(memory::planMemory(one).fits, "the decode must fit in tiles at this budget");
    const memory::MemoryPlan plan = memory::planMemory(r);
    QVERIFY2(plan.fits && plan.splitGuidance, plan.reason.c_str());
    QCOMPARE(plan.ditActivationPeak, batch1.ditActivationPeak);
    QVERIFY2(plan.reason.find("two batch-1 calls") != std::string::npos, plan.reason.c_str());
    QVERIFY(plan.chosenPeak() + plan.margin <= *r.budget);
    QVERIFY(memory::formatPlan(plan).find("guidance split into two batch-1 calls") != std::string::npos);
    QCOMPARE(nlohmann::json::parse(memory::planToJson(plan))["split_guidance"].get<bool>(), true);

    r.budget = plan.ditWeights;  // nothing fits either way: the batch-2 plan's refusal is kept
    const memory::MemoryPlan none = memory::planMemory(r);
    QVERIFY(!none.fits && !none.splitGuidance);
  }

  void formatAndJsonCarryTheDecision() {
    memory::PlanRequest r = wan13bRequest();
    r.budget = 16 * GiB;
    const memory::MemoryPlan plan = memory::planMemory(r);
    const std::string table = memory::formatPlan(plan);
    QVERIFY2(table.find("dit weights") != std::string::npos && table.find("budget 16 GiB") != std::string::npos,
             table.c_str());
    QVERIFY2(table.find(plan.reason) != std::string::npos, table.c_str());
    const nlohmann::json j = nlohmann::json::parse(memory::planToJson(plan));
    QCOMPARE(j["chosen"].get<std::string>(), std::string(toString(plan.chosen)));
    QCOMPARE(j["dit_weights"].get<std::uint64_t>(), plan.ditWeights);
    QCOMPARE(j["budget"].get<std::uint64_t>(), 16 * GiB);
    QCOMPARE(j["fits"].get<bool>(), plan.fits);
    QCOMPARE(j["items"].size(), plan.items.size());
  }
};

SHOTCHAIN_TEST(MemoryPlanTest, Appless)
#include "test_memory_plan.moc"
