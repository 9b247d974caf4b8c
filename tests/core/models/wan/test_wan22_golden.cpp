#include <QTest>

#include <cstdio>
#include <filesystem>
#include <optional>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/sampler.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::golden;
using shotchain::testing::goldenMismatch;
using shotchain::testing::Tolerance;

namespace {

// Golden README §9.7.
constexpr Tolerance kDit{1e-4, 1e-5};
constexpr Tolerance kVae{1e-4, 2e-5};
constexpr Tolerance kLoop{5e-4, 5e-5};  // run end to end

// The per-frame rows a latent of `frames` × `tokensPerFrame` tokens is given, spread to one per token.
at::Tensor perToken(const at::Tensor& perFrame, std::int64_t tokensPerFrame) {
  return perFrame.to(at::kFloat).repeat_interleave(tokensPerFrame, -1);
}

}  // namespace

// Wan 2.2 (golden §9): the TI2V DiT with per-token timesteps, the Wan 2.2 VAE, the image-to-video loop.
class TestWan22Golden : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> dit_, vae_;
  std::optional<WanModel> model_;
  std::optional<WanVae> coder_;

  void check(const char* what, const at::Tensor& got, const at::Tensor& expected, Tolerance tolerance) {
    const std::string mismatch = goldenMismatch(what, got, expected, tolerance);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
  }

 private Q_SLOTS:
  void initTestCase() {
    for (const char* name :
         {"wan22_ti2v_tiny.safetensors", "wan22_ti2v_tiny_io.safetensors", "wan22_vae_tiny.safetensors",
          "wan22_vae_tiny_io.safetensors", "wan22_ti2v_loop_io.safetensors", "wan22_ti2v_loop2_io.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(golden(name).string().c_str())));
    dit_ = io::SafetensorsFile::open(golden("wan22_ti2v_tiny_io.safetensors"));
    vae_ = io::SafetensorsFile::open(golden("wan22_vae_tiny_io.safetensors"));
    const io::WeightSet ditWeights = io::WeightSet::open(golden("wan22_ti2v_tiny.safetensors"));
    const WanDetection detection = detectWanConfig(ditWeights);
    QVERIFY2(detection.problems.empty(), detection.problems.empty() ? "" : detection.problems.front().c_str());
    QCOMPARE(detection.config.modelType, std::string("ti2v"));
    QCOMPARE(detection.config.family(), std::string("Wan 2.2 TI2V"));
    model_.emplace(WanModel::load(ditWeights, WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto}));
    QVERIFY(model_->capabilities().cleanFirstFrames);
    const io::WeightSet vaeWeights = io::WeightSet::open(golden("wan22_vae_tiny.safetensors"));
    const WanVaeDetection vae = detectWanVaeConfig(vaeWeights);
    QVERIFY2(vae.problems.empty(), vae.problems.empty() ? "" : vae.problems.front().c_str());
    QCOMPARE(vae.config.generation, 22);
    QCOMPARE(vae.config.variant(), std::string("tiny"));
    coder_.emplace(WanVae::load(vaeWeights));
  }

  // 9.1
  void ditDetectedFromShapesAlone() {
    // Without the metadata: the 48 channels say TI2V; the tiny sizes match the stored config.
    const io::WeightSet weights = io::WeightSet::open(golden("wan22_ti2v_tiny.safetensors"));
    WanConfig fromShapes = detectWanConfig(weights).config;
    QCOMPARE(fromShapes.inDim, std::int64_t{48});
    QCOMPARE(WanConfig::preset("ti2v-5b").variant(), std::string("5B"));
    QCOMPARE(WanConfig::preset("ti2v-5b").parameterCount() / 1'000'000, std::uint64_t{4999});
  }

  void perTokenTimestepsCaseA() {
    WanTrace trace;
    const auto out =
        model_->forward({dit_->tensor("caseA.x")}, dit_->tensor("caseA.t"), {dit_->tensor("caseA.context")}, &trace);
    check("caseA.out (frame 0 at t=0, 3 padding)", out.at(0), dit_->tensor("caseA.out"), kDit);
    for (const char* name : {"patch_embedding", "text_embedding", "blocks.0.self_attn", "blocks.0.cross_attn",
                             "blocks.0.ffn", "blocks.0", "blocks.1"}) {
      const at::Tensor expected = dit_->tensor(std::string("caseA.inter.") + name);
      const at::Tensor got = trace.at(name);
      // The official tensors carry the 3 padding tokens; the real 45 are compared.
      const bool tokens = expected.dim() == 3 && expected.size(1) == 48 && got.size(1) == 45;
      check(name, got, tokens ? expected.narrow(1, 0, 45) : expected, kDit);
    }
    check("head", trace.at("head"), dit_->tensor("caseA.inter.head").narrow(1, 0, 45), kDit);
    // e / e0 are computed once per frame here (frame rows constant over tokens): spread them to tokens.
    const at::Tensor e = trace.at("time_embedding").view({1, 3, 64}).repeat_interleave(15, 1);
    check("time_embedding (per token)", e, dit_->tensor("caseA.inter.e").narrow(1, 0, 45), kDit);
    const at::Tensor e0 = trace.at("time_projection").view({1, 3, 6, 64}).repeat_interleave(15, 1);
    check("time_projection (per token)", e0, dit_->tensor("caseA.inter.e0").narrow(1, 0, 45), kDit);
  }

  void oneTimestepCaseB() {
    const auto out =
        model_->forward({dit_->tensor("caseA.x")}, dit_->tensor("caseB.t"), {dit_->tensor("caseA.context")});
    check("caseB.out (1-D t)", out.at(0), dit_->tensor("caseB.out"), kDit);
    // The per-token timestep matters: caseA and caseB differ by 31 %.
    QVERIFY(compareTensors(dit_->tensor("caseA.out"), dit_->tensor("caseB.out")).relL2 > 0.3);
  }

  void uniformTokensCaseC() {
    const auto out =
        model_->forward({dit_->tensor("caseC.x")}, dit_->tensor("caseC.t"), {dit_->tensor("caseC.context")});
    check("caseC.out (t2v rows)", out.at(0), dit_->tensor("caseC.out"), kDit);
  }

  void perTokenRowsThatVaryWithinAFrame() {
    // Rows that are not constant over a frame take the per-token path: moving one token's timestep changes
    // that output, and a row equal per frame gives the per-frame result exactly.
    const at::Tensor x = dit_->tensor("caseA.x"), context = dit_->tensor("caseA.context");
    at::Tensor t = dit_->tensor("caseA.t").narrow(1, 0, 45).clone();
    const at::Tensor framed = model_->forward({x}, t, {context}).at(0);
    t[0][20] = 100;
    const at::Tensor moved = model_->forward({x}, t, {context}).at(0);
    QVERIFY(compareTensors(moved, framed).maxAbs > 1e-3);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, model_->forward({x}, t.narrow(1, 0, 40), {context}));
  }

  // 9.2
  void vaeConfigFromShapesMatchesMetadata() {
    const io::WeightSet weights = io::WeightSet::open(golden("wan22_vae_tiny.safetensors"));
    QCOMPARE(wanVaeParameterSpecs(WanVaeConfig::preset("tiny22")).size(), std::size_t{196});
    QCOMPARE(detectWanVaeConfig(weights).config.toJson(), WanVaeConfig::preset("tiny22").toJson());
    QCOMPARE(WanVaeConfig::preset("tiny22").parameterCount(), std::uint64_t{734056});
    const WanVaeConfig full = WanVaeConfig::preset("wan22");
    QCOMPARE(full.spatialFactor(), std::int64_t{16});
    QCOMPARE(full.temporalFactor(), std::int64_t{4});
    QCOMPARE(full.variant(), std::string("wan2.2"));
  }

  void vaeScaleMatchesReference() {
    QVERIFY(at::equal(at::tensor(coder_->latentMean()).to(at::kFloat), vae_->tensor("scale_mean")));
    QVERIFY(at::equal(at::tensor(coder_->latentStd()).to(at::kFloat).reciprocal(), vae_->tensor("scale_inv_std")));
  }

  void vaeEncode() {
    check("latent", coder_->encode(vae_->tensor("video")), vae_->tensor("latent"), kVae);
    check("mu_raw", coder_->encode(vae_->tensor("video"), false), vae_->tensor("mu_raw"), kVae);
    check("image_latent", coder_->encode(vae_->tensor("image")), vae_->tensor("image_latent"), kVae);
  }

  void vaeDecode() {
    VaeDecodeOptions raw;
    raw.clamp = false;
    check("decoded_unclamped", coder_->decode(vae_->tensor("latent"), raw), vae_->tensor("decoded_unclamped"), kVae);
    check("decoded", coder_->decode(vae_->tensor("latent")), vae_->tensor("decoded"), kVae);
    check("image_decoded_unclamped", coder_->decode(vae_->tensor("image_latent"), raw),
          vae_->tensor("image_decoded_unclamped"), kVae);
    check("image_decoded", coder_->decode(vae_->tensor("image_latent")), vae_->tensor("image_decoded"), kVae);
  }

  void vaeDecodesFrameByFrame() {
    VaeDecodeOptions raw;
    raw.clamp = false;
    WanVaeDecodeStream stream = coder_->decodeStream(raw);
    const at::Tensor latent = vae_->tensor("latent");
    std::vector<at::Tensor> pushed;
    std::vector<std::int64_t> counts;
    for (std::int64_t i = 0; i < latent.size(1); ++i) {
      pushed.push_back(stream.push(latent.narrow(1, i, 1)));
      counts.push_back(pushed.back().size(1));
    }
    QCOMPARE(counts, (std::vector<std::int64_t>{1, 4, 4}));
    check("pushed decode", at::cat(pushed, 1), vae_->tensor("decoded_unclamped"), kVae);
  }

  void vaePrefixProperty() {
    const at::Tensor video = vae_->tensor("video");
    check("latent[:1] from 1 frame", coder_->encode(video.narrow(1, 0, 1)), vae_->tensor("latent").narrow(1, 0, 1),
          kVae);
    check("latent[:2] from 5 frames", coder_->encode(video.narrow(1, 0, 5)), vae_->tensor("latent").narrow(1, 0, 2),
          kVae);
  }

  // 9.3: the official i2v() loop through sampleFlow with a clean prefix, for two runs (§9.3b: another shift,
  // guidance, step count and seed); each run's values are read from its file.
  void imageToVideoLoop_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("shift 5, guidance 5, 4 steps") << "wan22_ti2v_loop_io.safetensors";
    QTest::newRow("shift 3, guidance 2.5, 3 steps") << "wan22_ti2v_loop2_io.safetensors";
  }

  void imageToVideoLoop() {
    QFETCH(QString, file);
    const auto loop = io::SafetensorsFile::open(golden(file.toStdString()));
    const nlohmann::json run = nlohmann::json::parse(loop->header().metadata.at("config"));
    const int count = run.at("sampling_steps").get<int>();
    const at::Tensor z = coder_->encode(loop->tensor("image"));
    check("z", z, loop->tensor("z"), kVae);
    const at::Tensor noise = sampling::seededNoise({48, 3, 4, 4}, run.at("seed").get<std::uint64_t>());
    QVERIFY(at::equal(noise, loop->tensor("noise")));
    sampling::SamplerOptions options;
    options.steps = count;
    options.shift = run.at("shift").get<double>();
    options.guidance = run.at("guide_scale").get<double>();
    options.seed = run.at("seed").get<std::uint64_t>();
    options.cleanPrefix = loop->tensor("z");  // the stored encoding, so each step is compared on the official input
    std::vector<at::Tensor> inputs, timesteps, velocities;
    const sampling::Denoiser denoiser = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
      inputs.push_back(x[0].clone());
      timesteps.push_back(t[0].clone());
      const at::Tensor v = model_->forwardBatch(x, t, context);
      velocities.push_back(v.clone());
      return v;
    };
    std::vector<at::Tensor> latents;
    const auto onStep = [&](const sampling::StepEvent& event) {
      latents.push_back(event.latent.clone());
      return true;
    };
    const sampling::SampleResult result = sampling::sampleFlow(denoiser, {48, 3, 4, 4}, loop->tensor("context"),
                                                               loop->tensor("context_null"), options, onStep);
    QCOMPARE(static_cast<int>(latents.size()), count);
    check("latent_init", inputs.at(0), loop->tensor("latent_init"), kDit);
    std::vector<std::int64_t> steps;
    for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k) {
      const std::string step = "step" + std::to_string(k);
      steps.push_back(timesteps[k].max().item<std::int64_t>());
      // 4 frame-0 tokens at 0, 8 at the step's timestep: [1, 12] as the official loop builds it.
      QVERIFY2(at::equal(perToken(timesteps[k], 4).unsqueeze(0), loop->tensor(step + ".t")), step.c_str());
      check((step + ".noise_pred_cond").c_str(), velocities[k][0], loop->tensor(step + ".noise_pred_cond"), kLoop);
      check((step + ".noise_pred_uncond").c_str(), velocities[k][1], loop->tensor(step + ".noise_pred_uncond"), kLoop);
      check((step + ".latent").c_str(), latents[k], loop->tensor(step + ".latent"), kLoop);
      // Frame 0 is the image's encoding, bit for bit, after every step.
      QVERIFY(at::equal(latents[k].narrow(1, 0, 1), loop->tensor("z")));
    }
    const at::Tensor expectedSteps = loop->tensor("timesteps");
    QCOMPARE(steps, (std::vector<std::int64_t>(expectedSteps.data_ptr<std::int64_t>(),
                                               expectedSteps.data_ptr<std::int64_t>() + count)));
    check("x0", result.latent, loop->tensor("x0"), kLoop);
    check("video", coder_->decode(result.latent), loop->tensor("video"), kVae);
  }
};

SHOTCHAIN_TEST(TestWan22Golden, Appless)
#include "test_wan22_golden.moc"
