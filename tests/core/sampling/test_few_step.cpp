// Few-step distilled sampling: the warped denoising steps of the official schedulers, the two
// update rules, one conditional call per step.
#include <QTest>

#include <cmath>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "io/weight_set.h"
#include "models/kv_cache.h"
#include "models/wan/wan_model.h"
#include "sampling/few_step.h"
#include "sampling/stream_sampler.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::sampling;

class TestFewStep : public QObject {
  Q_OBJECT

  std::optional<models::WanModel> model_;

 private Q_SLOTS:
  void initTestCase() {
    const io::WeightSet weights = io::WeightSet::open(shotchain::testing::golden("wan_dit_tiny.safetensors"));
    model_.emplace(
        models::WanModel::load(weights, models::WanLoadOptions{at::kFloat, at::kCPU, models::AttentionImpl::Auto}));
  }

  // Self-Forcing (configs/self_forcing_dmd.yaml: denoising_step_list [1000, 750, 500, 250], warp_denoising_step,
  // timestep_shift 5) and LightX2V (configs/distill/wan21/wan_i2v_distill_lora_4step_cfg.json: the same list,
  // sample_shift 5, enable_cfg false): σ' = 5σ/(1 + 4σ).
  void warpedStepsAreTheOfficialTable() {
    const FewStepSchedule five = warpedDenoisingSteps({1000, 750, 500, 250}, 5.0);
    const std::vector<double> want{1000.0, 937.5, 2500.0 / 3.0, 625.0};
    QCOMPARE(five.timesteps.size(), std::size_t{4});
    for (std::size_t i = 0; i < want.size(); ++i) {
      QVERIFY2(std::abs(five.timesteps[i] - want[i]) < 1e-3, qPrintable(QString::number(five.timesteps[i])));
      QVERIFY(std::abs(five.sigmas[i] - want[i] / 1000) < 1e-6);
    }
    const FewStepSchedule plain = warpedDenoisingSteps({1000, 750, 500, 250}, 1.0);
    for (std::size_t i = 0; i < 4; ++i)
      QVERIFY(std::abs(plain.timesteps[i] - (1000.0 - 250.0 * static_cast<double>(i))) < 1e-3);
    // A step between the table's entries: 1000 − 1 = index 1 of the 1000-step schedule.
    QVERIFY(std::abs(warpedDenoisingSteps({999}, 5.0).timesteps[0] - 1000.0 * 5 * 0.999 / (1 + 4 * 0.999)) < 1e-3);
  }

  void badStepListsAreRefused() {
    for (const std::vector<int>& steps : std::vector<std::vector<int>>{{}, {1000, 1000}, {500, 750}, {1001}, {0}}) {
      bool refused = false;
      try {
        (void)warpedDenoisingSteps(steps, 5.0);
      } catch (const std::invalid_argument&) {
        refused = true;
      }
      QVERIFY(refused);
    }
  }

  void fourStepsAreFourConditionalCalls() {
    const models::WanConfig& c = model_->config();
    const std::vector<std::int64_t> shape{c.inDim, 1, 4, 4};
    const at::Tensor context = at::randn({5, c.textDim}, at::TensorOptions().dtype(at::kFloat));
    std::vector<float> seen;
    const Denoiser counting = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& ctx) {
      if (x.size(0) != 1 || ctx.size(0) != 1) throw std::logic_error("an unconditional pass");
      seen.push_back(t[0].item<float>());
      return model_->forwardBatch(x, t, ctx);
    };
    FewStepOptions options;
    options.seed = 7;
    const SampleResult euler = sampleFewStep(counting, shape, context, options);
    QCOMPARE(seen.size(), std::size_t{4});
    QCOMPARE(euler.stepsDone, 4);
    QVERIFY(std::abs(seen[1] - 937.5f) < 1e-3);  // the model sees 937.5, not 937

    // The Euler rule by hand.
    const FewStepSchedule s = warpedDenoisingSteps(options.steps, options.shift);
    at::Tensor x = seededNoise(shape, 7);
    for (std::size_t i = 0; i < 4; ++i) {
      const at::Tensor v = model_->forwardBatch(x.unsqueeze(0), at::full({1}, s.timesteps[i]), context.unsqueeze(0))[0];
      const at::Tensor x0 = x - s.sigmas[i] * v;
      x = i + 1 < 4 ? x0 + s.sigmas[i + 1] * v : x0;
    }
    QVERIFY(at::allclose(euler.latent, x, 1e-6, 1e-6));

    options.update = FewStepUpdate::Renoise;
    const SampleResult renoised = sampleFewStep(counting, shape, context, options);
    QVERIFY(!at::allclose(renoised.latent, euler.latent, 1e-3, 1e-3));
    QVERIFY(at::equal(renoised.latent, sampleFewStep(counting, shape, context, options).latent));  // seeded
  }

  // A clip that starts from clean latents (TI2V, a handed tail): they are fed at timestep 0 beside the
  // others' float timestep and leave sampling untouched.
  void aCleanPrefixStaysCleanOnAFewStepSchedule() {
    const models::WanConfig& c = model_->config();
    const std::vector<std::int64_t> shape{c.inDim, 3, 4, 4};
    const at::Tensor context = at::randn({5, c.textDim}, at::TensorOptions().dtype(at::kFloat));
    std::vector<at::Tensor> seen;
    const Denoiser recording = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& ctx) {
      seen.push_back(t.clone());
      return model_->forwardBatch(x, t, ctx);
    };
    SamplerOptions options;
    options.fewStep = FewStepSampling{{1000, 750, 500, 250}, FewStepUpdate::Euler};
    options.guidance = 1.0;
    options.seed = 3;
    options.cleanPrefix = at::randn({c.inDim, 1, 4, 4}, at::TensorOptions().dtype(at::kFloat));
    const SampleResult result = sampleFlow(recording, shape, context, {}, options);
    QCOMPARE(seen.size(), std::size_t{4});
    QCOMPARE(seen[1].scalar_type(), at::kFloat);
    QCOMPARE(seen[1][0][0].item<float>(), 0.0f);
    QVERIFY(std::abs(seen[1][0][1].item<float>() - 937.5f) < 1e-3);
    QVERIFY(at::equal(result.latent.narrow(1, 0, 1), options.cleanPrefix));
    QCOMPARE(result.schedule.timesteps[2], std::int64_t{833});
  }

  // Self-Forcing's pipeline/causal_inference.py, chunk by chunk over the KV cache: for each denoising step
  // the model predicts x0 at the float timestep, re-noised to the next one with fresh noise, and after the
  // last step one pass at timestep 0 writes the chunk into the cache. No guidance: 5 calls a chunk.
  void aStreamRunsTheCausalFewStepLoop() {
    models::WanConfig config = models::WanConfig::preset("tiny");
    config.causalBlockSize = 1;
    config.diffusionForcing = true;
    const models::WanModel causal = models::WanModel::random(config, 5);
    const at::Tensor cond = at::randn({4, config.textDim}, at::TensorOptions().dtype(at::kFloat));
    const std::vector<std::int64_t> shape{config.inDim, 3, 4, 4};
    SamplerOptions options;
    options.fewStep = FewStepSampling{{1000, 750, 500, 250}, FewStepUpdate::Renoise};
    options.guidance = 1.0;
    options.seed = 21;

    std::unique_ptr<models::KvCache> cache = causal.newKvCache(1, 4, 4, {});
    const sampling::ChunkDenoiser cached = sampling::cachedChunkDenoiser(causal, *cache);
    std::vector<float> seen;
    const sampling::ChunkDenoiser counting = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& ctx,
                                                 std::int64_t branch, bool commit) {
      if (x.size(0) != 1) throw std::logic_error("an unconditional pass");
      seen.push_back(t[0].item<float>());
      return cached(x, t, ctx, branch, commit);
    };
    const SampleResult streamed = sampleStream(counting, shape, 1, cond, {}, options);
    QCOMPARE(seen.size(), std::size_t{15});
    QCOMPARE(streamed.stepsDone, 12);
    QVERIFY(std::abs(seen[1] - 937.5f) < 1e-3);
    QCOMPARE(seen[4], 0.0f);

    std::unique_ptr<models::KvCache> byHand = causal.newKvCache(1, 4, 4, {});
    const FewStepSchedule s = warpedDenoisingSteps(options.fewStep->steps, 5.0);
    const at::Tensor noise = seededNoise(shape, 21);
    for (std::int64_t chunk = 0; chunk < 3; ++chunk) {
      at::Generator fresh = at::make_generator<at::CPUGeneratorImpl>(21 + 1 + static_cast<std::uint64_t>(chunk));
      at::Tensor x = noise.narrow(1, chunk, 1).clone(), x0;
      for (std::size_t i = 0; i < 4; ++i) {
        const at::Tensor t = at::full({1}, s.timesteps[i]);
        x0 = x - s.sigmas[i] * causal.forwardCached(x.unsqueeze(0), t, cond.unsqueeze(0), *byHand, 0, false)[0];
        if (i + 1 < 4) x = (1 - s.sigmas[i + 1]) * x0 + s.sigmas[i + 1] * at::randn(x.sizes(), fresh);
      }
      causal.forwardCached(x0.unsqueeze(0), at::zeros({1}, at::kLong), cond.unsqueeze(0), *byHand, 0, true);
      QVERIFY2(at::allclose(streamed.latent.narrow(1, chunk, 1), x0, 1e-6, 1e-6), qPrintable(QString::number(chunk)));
    }
  }
};

SHOTCHAIN_TEST(TestFewStep, Core)
#include "test_few_step.moc"
