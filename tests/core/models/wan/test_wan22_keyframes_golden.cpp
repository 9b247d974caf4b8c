#include <QTest>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "continuity/image_condition.h"
#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/vae_geometry.h"
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

// Golden README §12 (the §9.7 rows): the VAE-encoded part of y, a DiT forward, loops run end to end. The masks,
// the zero latents and the copied latents are compared exactly.
constexpr Tolerance kVae{1e-4, 2e-5};
constexpr Tolerance kDit{1e-4, 1e-5};
constexpr Tolerance kLoop{5e-4, 5e-5};

// What one expert was asked and answered, step by step.
struct ExpertCalls {
  std::vector<at::Tensor> t, velocity;
};

// The expert as a Denoiser that appends y to the latent (the I2V experts' 36 input channels) and records its calls.
sampling::Denoiser recordingExpert(const WanModel& model, ExpertCalls& calls, const at::Tensor& y) {
  return [&model, &calls, y](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
    calls.t.push_back(t[0].clone());
    calls.velocity.push_back(
        model.forwardBatch(at::cat({x, y.unsqueeze(0).expand({x.size(0), -1, -1, -1, -1})}, 1), t, context));
    return calls.velocity.back();
  };
}

nlohmann::json metadataJson(const io::SafetensorsFile& file, const char* key) {
  return nlohmann::json::parse(file.header().metadata.at(key));
}

WanModel loadExpert(const std::string& name) {
  return WanModel::load(io::WeightSet::open(golden(name)), WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto});
}

WanVae loadVae(const nlohmann::json& config) {
  // config["vae"] is "wan_vae_tiny.safetensors (…)": the file name is its first word.
  const std::string described = config.at("vae").get<std::string>();
  return WanVae::load(io::WeightSet::open(golden(described.substr(0, described.find(' ')))));
}

}  // namespace

// Wan 2.2 I2V A14B keyframes (golden §12): the first–last-frame y of ComfyUI's WanFirstLastFrameToVideo through the
// official two-expert loop, and SVI 2.0 Pro's y (anchor latent, motion latents, zero latents) through the low-noise
// expert. Every configurable value comes from the io files.
class TestWan22KeyframesGolden : public QObject {
  Q_OBJECT

  void check(const std::string& what, const at::Tensor& got, const at::Tensor& expected, Tolerance tolerance) {
    const std::string mismatch = goldenMismatch(what, got, expected, tolerance);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
  }

 private Q_SLOTS:
  void initTestCase() {
    for (const char* name :
         {"wan22_flf_loop_io.safetensors", "wan22_svi_io.safetensors", "wan22_i2v_high_tiny.safetensors",
          "wan22_i2v_low_tiny.safetensors", "wan_vae_tiny.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(golden(name).string().c_str())));
  }

  // §12.1: the mask (latent 0 all channels, the last latent's channel temporal − 1) and y of a start and an end image.
  void firstLastMaskAndY() {
    const auto loop = io::SafetensorsFile::open(golden("wan22_flf_loop_io.safetensors"));
    const nlohmann::json config = metadataJson(*loop, "config");
    const std::int64_t frames = config.at("frame_num").get<std::int64_t>();
    const WanVae vae = loadVae(config);
    const VaeGeometry geometry = vae.geometry();
    const at::Tensor msk = loop->tensor("msk");
    const std::int64_t height = config.at("size")[0].get<std::int64_t>(),
                       width = config.at("size")[1].get<std::int64_t>();
    QCOMPARE(msk.size(2), height / geometry.spatialFactor);
    QCOMPARE(msk.size(3), width / geometry.spatialFactor);
    QVERIFY(at::equal(
        continuity::imageToVideoMask(frames, msk.size(2), msk.size(3), geometry.temporalFactor, true, true), msk));

    const at::Tensor start = loop->tensor("start"), end = loop->tensor("end");  // [3, 1, H, W]
    QCOMPARE(start.size(2), height);
    const at::Tensor y = continuity::imageToVideoCondition(vae, start.squeeze(1), end.squeeze(1), frames);
    const at::Tensor expected = loop->tensor("y");
    QVERIFY(y.sizes() == expected.sizes());
    const std::int64_t maskChannels = msk.size(0);
    QVERIFY(at::equal(y.narrow(0, 0, maskChannels), expected.narrow(0, 0, maskChannels)));
    check("y latent", y.narrow(0, maskChannels, y.size(0) - maskChannels),
          expected.narrow(0, maskChannels, expected.size(0) - maskChannels), kVae);
  }

  // §12.1: WanI2V.generate's two-expert loop on the stored first–last-frame y, every step.
  void firstLastLoop() {
    const auto loop = io::SafetensorsFile::open(golden("wan22_flf_loop_io.safetensors"));
    const nlohmann::json config = metadataJson(*loop, "config");
    const WanModel high = loadExpert(config.at("high").get<std::string>());
    const WanModel low = loadExpert(config.at("low").get<std::string>());
    const at::Tensor y = loop->tensor("y");

    sampling::SamplerOptions options;
    options.steps = config.at("sampling_steps").get<int>();
    options.shift = config.at("shift").get<double>();
    options.seed = config.at("seed").get<std::uint64_t>();
    options.guidance = config.at("guide_scale")[0].get<double>();  // (low, high) as the official pair
    options.experts = sampling::ExpertSwitch{
        .boundary = config.at("boundary").get<double>() * config.at("num_train_timesteps").get<double>(),
        .highGuidance = config.at("guide_scale")[1].get<double>()};
    ExpertCalls highCalls, lowCalls;
    options.experts->highNoise = recordingExpert(high, highCalls, y);
    std::vector<std::pair<int, int>> switches;
    options.experts->beforeExpert = [&](int expert, int step) { switches.emplace_back(expert, step); };

    const at::Tensor noise = loop->tensor("noise");
    QVERIFY(at::equal(sampling::seededNoise(noise.sizes().vec(), options.seed), noise));
    std::vector<at::Tensor> latents;
    const sampling::SampleResult result =
        sampling::sampleFlow(recordingExpert(low, lowCalls, y), noise.sizes().vec(), loop->tensor("context"),
                             loop->tensor("context_null"), options, [&](const sampling::StepEvent& event) {
                               latents.push_back(event.latent.clone());
                               return true;
                             });

    const at::Tensor timesteps = loop->tensor("timesteps"), experts = loop->tensor("expert"),
                     scales = loop->tensor("guide_scale");
    QCOMPARE(static_cast<std::int64_t>(options.steps), timesteps.numel());
    QCOMPARE(static_cast<std::int64_t>(result.experts.size()), timesteps.numel());
    QCOMPARE(static_cast<std::int64_t>(latents.size()), timesteps.numel());
    QVERIFY(at::equal(at::tensor(result.schedule.timesteps, at::kLong), timesteps));
    QVERIFY(at::equal(at::tensor(result.schedule.sigmas, at::kFloat), loop->tensor("sigmas")));
    QVERIFY(at::equal(at::tensor(std::vector<std::int64_t>(result.experts.begin(), result.experts.end()), at::kLong),
                      experts));
    QVERIFY(at::equal(at::tensor(result.guidances, at::kDouble), scales));
    std::size_t h = 0, l = 0;
    for (std::int64_t k = 0; k < timesteps.numel(); ++k) {
      const std::string step = "step" + std::to_string(k);
      const bool isHigh = experts[k].item<std::int64_t>() == 1;
      ExpertCalls& calls = isHigh ? highCalls : lowCalls;
      std::size_t& n = isHigh ? h : l;
      QVERIFY2(n < calls.t.size(), step.c_str());
      QVERIFY2(at::equal(calls.t[n].reshape({1}).to(at::kLong), loop->tensor(step + ".t")), step.c_str());
      check(step + ".noise_pred_cond", calls.velocity[n][0], loop->tensor(step + ".noise_pred_cond"), kLoop);
      check(step + ".noise_pred_uncond", calls.velocity[n][1], loop->tensor(step + ".noise_pred_uncond"), kLoop);
      check(step + ".latent", latents[static_cast<std::size_t>(k)], loop->tensor(step + ".latent"), kLoop);
      ++n;
    }
    QCOMPARE(h, highCalls.t.size());
    QCOMPARE(l, lowCalls.t.size());
    const auto firstLow = static_cast<int>(std::count(result.experts.begin(), result.experts.end(), 1));
    QCOMPARE(switches, (std::vector<std::pair<int, int>>{{1, 0}, {0, firstLow}}));
    check("x0", result.latent, loop->tensor("x0"), kLoop);
  }

  // §12.2: SVI 2.0 Pro's y for a first clip and for 1 and 2 motion latents (exact: the mask, the anchor latent
  // and the motion latents are copies, the rest zeros), the anchor's encoding, and one low-noise expert forward.
  void sviCondition() {
    const auto svi = io::SafetensorsFile::open(golden("wan22_svi_io.safetensors"));
    const nlohmann::json config = metadataJson(*svi, "config");
    const std::int64_t temporal = config.at("temporal").get<std::int64_t>();
    const at::Tensor anchorLatent = svi->tensor("anchor_latent"), prev = svi->tensor("prev_latent");

    const WanVae vae = loadVae(config);
    QCOMPARE(vae.geometry().temporalFactor, temporal);
    check("anchor_latent", vae.encode(svi->tensor("anchor")), anchorLatent, kVae);

    QVERIFY(!config.at("cases").empty());
    for (const auto& [key, value] : config.at("cases").items()) {
      const std::int64_t frames = value[0].get<std::int64_t>(), k = value[1].get<std::int64_t>();
      const std::int64_t latentFrames = (frames - 1) / temporal + 1;
      const at::Tensor motion = k > 0 ? prev.narrow(1, prev.size(1) - k, k) : at::Tensor();
      const at::Tensor y = continuity::sviCondition(anchorLatent, motion, latentFrames, temporal);
      const at::Tensor expected = svi->tensor(key);
      QVERIFY2(y.sizes() == expected.sizes(), key.c_str());
      QVERIFY2(at::equal(y, expected), key.c_str());
    }

    const WanModel low = loadExpert(config.at("low").get<std::string>());
    const at::Tensor y = svi->tensor(config.at("forward_case").get<std::string>());
    const at::Tensor t = svi->tensor("svi_t");
    QCOMPARE(t.item<std::int64_t>(), config.at("forward_t").get<std::int64_t>());
    const std::vector<at::Tensor> out =
        low.forward({at::cat({svi->tensor("svi_x"), y}, 0)}, t, {svi->tensor("svi_context")});
    QCOMPARE(out.size(), std::size_t{1});
    check("svi_forward_out", out[0], svi->tensor("svi_forward_out"), kDit);
  }
};

SHOTCHAIN_TEST(TestWan22KeyframesGolden, Appless)
#include "test_wan22_keyframes_golden.moc"
