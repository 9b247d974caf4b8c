#include <QProcess>
#include <QTest>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "continuity/image_condition.h"
#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/model_registry.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/sampler.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::golden;
using shotchain::testing::goldenMismatch;
using shotchain::testing::Tolerance;

namespace {

constexpr Tolerance kExact{1e-4, 2e-5};  // y (golden README §9.7)
constexpr Tolerance kLoop{5e-4, 5e-5};   // loops run end to end

// What one expert was asked and answered, step by step.
struct Calls {
  std::vector<at::Tensor> t, velocity;
};

sampling::Denoiser recording(const WanModel& model, Calls& calls, const at::Tensor& y) {
  return [&model, &calls, y](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
    calls.t.push_back(t[0].clone());
    const at::Tensor input = y.defined() ? at::cat({x, y.unsqueeze(0).expand({x.size(0), -1, -1, -1, -1})}, 1) : x;
    calls.velocity.push_back(model.forwardBatch(input, t, context));
    return calls.velocity.back();
  };
}

}  // namespace

// Wan 2.2 A14B (golden §9.4, §9.5): two experts switched at the boundary, each with its guidance; the I2V
// experts' y (frame mask and the start image's latent) as extra input channels.
class TestWan22MoeGolden : public QObject {
  Q_OBJECT

  void check(const std::string& what, const at::Tensor& got, const at::Tensor& expected, Tolerance tolerance) {
    const std::string mismatch = goldenMismatch(what, got, expected, tolerance);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
  }

  static WanModel load(const char* name) {
    return WanModel::load(io::WeightSet::open(golden(name)), WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto});
  }

  // Runs the loop file's two-expert sampling and compares every step: its timestep, its expert and guidance
  // (exact), both noise predictions of the expert that ran and the latent after the step.
  void runLoop(const io::SafetensorsFile& loop, const WanModel& high, const WanModel& low,
               sampling::SamplerOptions options, const at::Tensor& y) {
    Calls highCalls, lowCalls;
    options.experts->highNoise = recording(high, highCalls, y);
    std::vector<std::pair<int, int>> switches;
    options.experts->beforeExpert = [&](int expert, int step) { switches.emplace_back(expert, step); };
    std::vector<at::Tensor> latents;
    const at::Tensor noise = loop.tensor("noise");
    QVERIFY(at::equal(sampling::seededNoise(noise.sizes().vec(), options.seed), noise));
    const sampling::SampleResult result =
        sampling::sampleFlow(recording(low, lowCalls, y), noise.sizes().vec(), loop.tensor("context"),
                             loop.tensor("context_null"), options, [&](const sampling::StepEvent& event) {
                               latents.push_back(event.latent.clone());
                               return true;
                             });
    const at::Tensor timesteps = loop.tensor("timesteps"), experts = loop.tensor("expert"),
                     scales = loop.tensor("guide_scale");
    QCOMPARE(static_cast<std::int64_t>(result.experts.size()), timesteps.numel());
    QVERIFY(at::equal(at::tensor(result.schedule.timesteps, at::kLong), timesteps));
    QVERIFY(at::equal(at::tensor(result.schedule.sigmas, at::kFloat), loop.tensor("sigmas")));
    QVERIFY(at::equal(at::tensor(std::vector<std::int64_t>(result.experts.begin(), result.experts.end()), at::kLong),
                      experts));
    QVERIFY(at::equal(at::tensor(result.guidances, at::kDouble), scales));
    std::size_t h = 0, l = 0;
    for (std::int64_t k = 0; k < timesteps.numel(); ++k) {
      const std::string step = "step" + std::to_string(k);
      Calls& calls = experts[k].item<std::int64_t>() == 1 ? highCalls : lowCalls;
      std::size_t& n = experts[k].item<std::int64_t>() == 1 ? h : l;
      QVERIFY2(at::equal(calls.t[n].reshape({1}), loop.tensor(step + ".t")), step.c_str());
      check(step + ".noise_pred_cond", calls.velocity[n][0], loop.tensor(step + ".noise_pred_cond"), kLoop);
      check(step + ".noise_pred_uncond", calls.velocity[n][1], loop.tensor(step + ".noise_pred_uncond"), kLoop);
      check(step + ".latent", latents[static_cast<std::size_t>(k)], loop.tensor(step + ".latent"), kLoop);
      ++n;
    }
    QCOMPARE(h, highCalls.t.size());
    QCOMPARE(l, lowCalls.t.size());
    // One switch from high to low, announced before the step it happens at.
    const auto firstLow = static_cast<int>(std::count(result.experts.begin(), result.experts.end(), 1));
    QCOMPARE(switches, (std::vector<std::pair<int, int>>{{1, 0}, {0, firstLow}}));
    check("x0", result.latent, loop.tensor("x0"), kLoop);
  }

 private Q_SLOTS:
  void initTestCase() {
    for (const char* name :
         {"wan22_moe_loop_io.safetensors", "wan22_moe_high_tiny.safetensors", "wan22_moe_low_tiny.safetensors",
          "wan22_i2v_moe_loop_io.safetensors", "wan22_i2v_high_tiny.safetensors", "wan22_i2v_low_tiny.safetensors",
          "wan_vae_tiny.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(golden(name).string().c_str())));
  }

  void i2vExpertDetected() {
    for (const char* name : {"wan22_i2v_high_tiny.safetensors", "wan22_i2v_low_tiny.safetensors"}) {
      const io::WeightSet weights = io::WeightSet::open(golden(name));
      const auto [row, identified] = identifyFamily(weights);
      QVERIFY(row != nullptr);
      QCOMPARE(std::string(row->name), std::string("wan22_i2v"));
      QVERIFY2(identified.problem.empty(), identified.problem.c_str());
      QCOMPARE(identified.description, std::string("Wan 2.2 I2V, tiny"));
      // From the shapes alone (no metadata config), the 36 input channels say I2V.
      const WanConfig config = detectWanConfig(weights).config;
      QCOMPARE(config.modelType, std::string("i2v"));
      QCOMPARE(config.inDim, std::int64_t{36});
      QCOMPARE(config.outDim, std::int64_t{16});
    }
    QCOMPARE(WanConfig::preset("i2v-a14b").variant(), std::string("A14B"));
    const WanModel model = load("wan22_i2v_high_tiny.safetensors");
    QCOMPARE(model.latentChannels(), std::int64_t{16});
    QCOMPARE(model.capabilities().imageConditionChannels, std::int64_t{20});
    // The T2V experts have Wan 2.1's shapes: the model set, not the file, says which is which.
    const auto [t2vRow, t2v] = identifyFamily(io::WeightSet::open(golden("wan22_moe_high_tiny.safetensors")));
    QCOMPARE(std::string(t2vRow->name), std::string("wan_dit"));
  }

  // §9.4: T2V-A14B's loop, boundary 0.875, guide_scale (3.0, 4.0), UniPC, shift 12, 6 steps.
  void t2vTwoExpertLoop() {
    const auto loop = io::SafetensorsFile::open(golden("wan22_moe_loop_io.safetensors"));
    const WanModel high = load("wan22_moe_high_tiny.safetensors"), low = load("wan22_moe_low_tiny.safetensors");
    sampling::SamplerOptions options;
    options.steps = 6;
    options.shift = 12.0;
    options.seed = 2601;
    options.guidance = 3.0;
    options.experts = sampling::ExpertSwitch{.boundary = 875.0, .highGuidance = 4.0};
    runLoop(*loop, high, low, options, {});
  }

  // §9.5: I2V-A14B's loop, boundary 0.9, guide_scale 3.5, shift 5, 4 steps; y from the start image.
  void i2vTwoExpertLoop() {
    const auto loop = io::SafetensorsFile::open(golden("wan22_i2v_moe_loop_io.safetensors"));
    QVERIFY(at::equal(continuity::imageToVideoMask(9, 8, 8), loop->tensor("msk")));
    const WanVae vae = WanVae::load(io::WeightSet::open(golden("wan_vae_tiny.safetensors")));
    const at::Tensor y = continuity::imageToVideoCondition(vae, loop->tensor("image").squeeze(1), {}, 9);
    check("y", y, loop->tensor("y"), kExact);
    const WanModel high = load("wan22_i2v_high_tiny.safetensors"), low = load("wan22_i2v_low_tiny.safetensors");
    sampling::SamplerOptions options;
    options.steps = 4;
    options.shift = 5.0;
    options.seed = 2701;
    options.guidance = 3.5;
    options.experts = sampling::ExpertSwitch{.boundary = 900.0, .highGuidance = 3.5};
    runLoop(*loop, high, low, options, loop->tensor("y"));  // the stored y: each step on the official input
  }

  // The same through `shotchain verify LOW LOOP --high-noise HIGH [--vae VAE]`; without --high-noise it says what is missing.
  void verifyVerb() {
    const auto path = [](const char* name) { return QString::fromStdString(golden(name).string()); };
    QProcess process;
    process.start(SHOTCHAIN_CLI,
                  {"verify", path("wan22_i2v_low_tiny.safetensors"), path("wan22_i2v_moe_loop_io.safetensors"),
                   "--high-noise", path("wan22_i2v_high_tiny.safetensors"), "--vae", path("wan_vae_tiny.safetensors")});
    QVERIFY(process.waitForFinished(120000));
    const QString out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
    QVERIFY2(out.contains("0 failed: PASS") && out.contains("expert ") && out.contains("y "), qPrintable(out));
    process.start(SHOTCHAIN_CLI,
                  {"verify", path("wan22_moe_low_tiny.safetensors"), path("wan22_moe_loop_io.safetensors")});
    QVERIFY(process.waitForFinished(120000));
    QVERIFY(process.exitCode() != 0);
    QVERIFY(QString::fromUtf8(process.readAllStandardError()).contains("--high-noise"));
  }

  void boundaryIsOnTheIntegerTimestep() {
    const sampling::ExpertSwitch experts{.boundary = 875.0, .highGuidance = 4.0};
    QCOMPARE(sampling::expertAt(experts, 875), 1);  // equal goes to the high-noise expert
    QCOMPARE(sampling::expertAt(experts, 874), 0);
    // A split kept as a step index (ComfyUI's KSamplerAdvanced pair) ignores the timesteps.
    sampling::ExpertSwitch byStep = experts;
    byStep.switchStep = 2;
    QCOMPARE(sampling::expertAt(byStep, 100, 1), 1);
    QCOMPARE(sampling::expertAt(byStep, 999, 2), 0);
  }

  void stepCacheAndDiffusionForcingRefused() {
    sampling::SamplerOptions options;
    options.experts = sampling::ExpertSwitch{};
    options.perFrame = sampling::PerFrameSampling{};
    const sampling::Denoiser none = [](const at::Tensor& x, const at::Tensor&, const at::Tensor&) { return x; };
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             sampling::sampleFlow(none, {16, 1, 2, 2}, at::zeros({1, 4}), at::zeros({1, 4}), options));
  }
};

SHOTCHAIN_TEST(TestWan22MoeGolden, Appless)
#include "test_wan22_moe_golden.moc"
