#include <QTest>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include <ATen/ATen.h>

#include "golden_compare.h"
#include "io/weight_set.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "sampling/latent_preview.h"
#include "sampling/sampler.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::sampling;
using shotchain::testing::compareTensors;
using shotchain::testing::errorOf;
using shotchain::testing::golden;

namespace {

const std::vector<std::int64_t> kShape{16, 3, 8, 8};  // 48 tokens at patch (1, 2, 2)

}  // namespace

class TestSampler : public QObject {
  Q_OBJECT

  std::optional<models::WanModel> model_;
  Denoiser denoiser_;
  at::Tensor cond_, uncond_;

  SamplerOptions options(int steps, SolverKind solver = SolverKind::UniPC) const {
    SamplerOptions o;
    o.steps = steps;
    o.solver = solver;
    o.seed = 1234;
    return o;
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!std::filesystem::is_directory(SHOTCHAIN_GOLDEN_DIR))
      QFAIL(qPrintable(QString("golden folder missing: %1").arg(SHOTCHAIN_GOLDEN_DIR)));
    const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
    model_.emplace(
        models::WanModel::load(weights, models::WanLoadOptions{at::kFloat, at::kCPU, models::AttentionImpl::Auto}));
    denoiser_ = ditDenoiser(*model_);
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(99);
    cond_ = at::randn({7, 48}, g);
    uncond_ = at::randn({11, 48}, g);
  }

  void noiseIsSeededOnTheCpu() {
    const at::Tensor a = seededNoise(kShape, 42), b = seededNoise(kShape, 42), c = seededNoise(kShape, 43);
    QCOMPARE(a.sizes(), at::IntArrayRef(kShape));
    QCOMPARE(a.scalar_type(), at::kFloat);
    QVERIFY(at::equal(a, b));
    QVERIFY(!at::equal(a, c));
    // Same stream as libtorch's CPU generator with that seed.
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(42);
    QVERIFY(at::equal(a, at::randn(kShape, g)));
    QVERIFY(std::abs(a.mean().item<double>()) < 0.1);
    QVERIFY(std::abs(a.std().item<double>() - 1.0) < 0.1);
    // A global manual_seed elsewhere does not change it.
    at::manual_seed(7);
    QVERIFY(at::equal(a, seededNoise(kShape, 42)));
  }

  void cfgBatchEqualsTwoForwards() {
    int calls = 0;
    std::vector<std::int64_t> batchSizes;
    const Denoiser counting = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& c) {
      ++calls;
      batchSizes.push_back(x.size(0));
      return denoiser_(x, t, c);
    };
    const at::Tensor x = seededNoise(kShape, 5);
    const double g = 5.0;
    const at::Tensor batched = guidedVelocity(counting, x, 637, cond_, uncond_, g);
    QCOMPARE(calls, 1);
    QCOMPARE(batchSizes.front(), std::int64_t{2});
    // Two separate forwards of the list API (each context at its own length).
    const at::Tensor t = at::full({1}, std::int64_t{637}, at::kLong);
    const at::Tensor vc = model_->forward({x}, t, {cond_}).at(0);
    const at::Tensor vu = model_->forward({x}, t, {uncond_}).at(0);
    const at::Tensor separate = vu + g * (vc - vu);
    const auto e = compareTensors(batched, separate);
    std::printf("  CFG batch-2 vs two forwards: max-abs %.3g rel-L2 %.3g (|v| rms %.3g)\n", e.maxAbs, e.relL2,
                separate.pow(2).mean().sqrt().item<double>());
    QVERIFY2(e.maxAbs < 1e-4 && e.relL2 < 1e-5, qPrintable(QString("max-abs %1 rel %2").arg(e.maxAbs).arg(e.relL2)));
    // Guidance 1: a single conditional forward.
    calls = 0;
    batchSizes.clear();
    const at::Tensor single = guidedVelocity(counting, x, 637, cond_, uncond_, 1.0);
    QCOMPARE(calls, 1);
    QCOMPARE(batchSizes.front(), std::int64_t{1});
    QVERIFY(compareTensors(single, vc).maxAbs < 1e-5);
  }

  void endToEndShapesAndDeterminism() {
    for (const SolverKind kind : {SolverKind::UniPC, SolverKind::Euler}) {
      int events = 0;
      std::vector<float> sigmas;
      const auto onStep = [&](const StepEvent& e) {
        ++events;
        sigmas.push_back(e.sigma);
        if (e.latent.sizes() != at::IntArrayRef(kShape) || e.denoised.sizes() != at::IntArrayRef(kShape)) return false;
        return true;
      };
      const SampleResult a = sampleFlow(denoiser_, kShape, cond_, uncond_, options(6, kind), onStep);
      QCOMPARE(events, 6);
      QCOMPARE(a.stepsDone, 6);
      QVERIFY(!a.cancelled);
      QCOMPARE(a.latent.sizes(), at::IntArrayRef(kShape));
      QCOMPARE(a.latent.scalar_type(), at::kFloat);
      QVERIFY(at::isfinite(a.latent).all().item<bool>());
      QCOMPARE(sigmas.back(), 0.0f);
      QCOMPARE(sigmas.front(), a.schedule.sigmas[1]);
      const SampleResult b = sampleFlow(denoiser_, kShape, cond_, uncond_, options(6, kind));
      QVERIFY2(at::equal(a.latent, b.latent), "same seed, different result");
      SamplerOptions other = options(6, kind);
      other.seed = 1235;
      const SampleResult c = sampleFlow(denoiser_, kShape, cond_, uncond_, other);
      QVERIFY(!at::equal(a.latent, c.latent));
      const double mean = std::accumulate(a.stepSeconds.begin(), a.stepSeconds.end(), 0.0) / a.stepSeconds.size();
      std::printf("  %s: 6 steps on the tiny DiT (golden weights, 48 tokens, CFG batch 2): %.2f ms/step\n",
                  solverName(kind).c_str(), mean * 1e3);
    }
  }

  void initialLatentReplacesNoise() {
    const at::Tensor noise = seededNoise(kShape, 1234);
    const SampleResult a = sampleFlow(denoiser_, kShape, cond_, uncond_, options(3));
    const SampleResult b = sampleFlow(denoiser_, kShape, cond_, uncond_, options(3), {}, {}, nullptr, noise * 1.0);
    QVERIFY(at::equal(a.latent, b.latent));
    QVERIFY(errorOf([&] {
              sampleFlow(denoiser_, kShape, cond_, uncond_, options(3), {}, {}, nullptr, at::zeros({16, 1, 8, 8}));
            }).contains("latent shape"));
  }

  void beforeStepHookSeesEverySample() {
    std::vector<float> seen;
    const BeforeStepHook hook = [&](int step, float sigma, at::Tensor& latent) {
      seen.push_back(sigma);
      QCOMPARE(latent.sizes(), at::IntArrayRef(kShape));
      (void)step;
      latent.select(1, 0).zero_();  // e.g. hold latent frame 0 (here: at zero)
    };
    std::vector<at::Tensor> samples;
    const auto onStep = [&](const StepEvent& e) {
      samples.push_back(e.latent);
      return true;
    };
    const SampleResult r = sampleFlow(denoiser_, kShape, cond_, uncond_, options(4), onStep, hook);
    QCOMPARE(seen.size(), std::size_t{4});
    QCOMPARE(seen.front(), r.schedule.sigmas[0]);
  }

  void callbackCancelsWithinOneStep() {
    int calls = 0;
    const Denoiser counting = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& c) {
      ++calls;
      return denoiser_(x, t, c);
    };
    const SampleResult r =
        sampleFlow(counting, kShape, cond_, uncond_, options(10), [](const StepEvent& e) { return e.step < 2; });
    QVERIFY(r.cancelled);
    QCOMPARE(r.stepsDone, 3);
    QCOMPARE(calls, 3);  // no model call after the cancelling step
    QCOMPARE(r.latent.sizes(), at::IntArrayRef(kShape));

    // The atomic flag (e.g. set by the UI thread) is polled before every model call.
    calls = 0;
    std::atomic<bool> cancel{false};
    const SampleResult s = sampleFlow(
        counting, kShape, cond_, uncond_, options(10),
        [&](const StepEvent& e) {
          if (e.step == 4) cancel = true;
          return true;
        },
        {}, &cancel);
    QVERIFY(s.cancelled);
    QCOMPARE(s.stepsDone, 5);
    QCOMPARE(calls, 5);
  }

  void rejectsMissingNegativeContext() {
    QVERIFY(errorOf([&] { sampleFlow(denoiser_, kShape, cond_, at::Tensor(), options(2)); }).contains("negative"));
    SamplerOptions o = options(2);
    o.guidance = 1.0;
    QCOMPARE(sampleFlow(denoiser_, kShape, cond_, at::Tensor(), o).stepsDone, 2);
  }

  // ---- latent preview ----

  void wanFactorsProjectPerChannel() {
    const LatentRgbFactors f = latentRgbFactors(*models::wanVaeKnowledge().preview);
    QCOMPARE(f.channels(), 16);
    // A latent that is 1 in channel c and 0 elsewhere previews as weights[c] + bias.
    at::Tensor latent = at::zeros({16, 2, 3, 4});
    latent[5].fill_(1.0);
    const at::Tensor rgb = latentToRgb(latent, f);
    QCOMPARE(rgb.sizes(), at::IntArrayRef({2, 3, 4, 3}));
    for (int k = 0; k < 3; ++k)
      QVERIFY(std::abs(rgb[1][2][3][k].item<float>() -
                       (f.weights[5][static_cast<std::size_t>(k)] + f.bias[static_cast<std::size_t>(k)])) < 1e-6);
    // Batched input and 8-bit output.
    const at::Tensor rgb8 = latentToRgb8(latent.unsqueeze(0).expand({2, 16, 2, 3, 4}), f);
    QCOMPARE(rgb8.sizes(), at::IntArrayRef({2, 2, 3, 4, 3}));
    QCOMPARE(rgb8.scalar_type(), at::kByte);
    const float expected = std::round(std::clamp((f.weights[5][0] + f.bias[0] + 1.0f) * 0.5f, 0.0f, 1.0f) * 255.0f);
    QCOMPARE(static_cast<float>(rgb8[0][0][0][0][0].item<std::uint8_t>()), expected);
    QVERIFY(errorOf([&] { latentToRgb(at::zeros({8, 1, 2, 2}), f); }).contains("channels"));
  }

  void fitRecoversKnownFactors() {
    const LatentRgbFactors truth = latentRgbFactors(*models::wanVaeKnowledge().preview);
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(8);
    const at::Tensor latents = at::randn({3, 16, 2, 6, 6}, g);
    const at::Tensor rgb = latentToRgb(latents, truth).movedim(-1, 1);  // [B, 3, F, H, W]
    const LatentRgbFactors fit = fitLatentRgbFactors(latents, rgb);
    double worst = 0;
    for (int c = 0; c < 16; ++c)
      for (int k = 0; k < 3; ++k)
        worst = std::max(worst, static_cast<double>(
                                    std::abs(fit.weights[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] -
                                             truth.weights[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)])));
    for (int k = 0; k < 3; ++k)
      worst = std::max(worst, static_cast<double>(std::abs(fit.bias[static_cast<std::size_t>(k)] -
                                                           truth.bias[static_cast<std::size_t>(k)])));
    std::printf("  least-squares fit of the preview factors: max |error| %.3g\n", worst);
    QVERIFY(worst < 1e-5);
    QVERIFY(errorOf([&] { fitLatentRgbFactors(latents, rgb.narrow(1, 0, 2)); }).contains("3 channels"));
  }

  void poolVideoOntoLatentGrid() {
    // 9 frames → 3 latent frames (1 + 4 + 4), 16×16 → 2×2.
    at::Tensor video = at::zeros({3, 9, 16, 16});
    for (int t = 0; t < 9; ++t) video.select(1, t).fill_(t);
    video.select(0, 1).narrow(1, 8, 8).add_(10.0);  // green: right half brighter
    const at::Tensor pooled = poolVideoToLatentGrid(video, 4, 8);
    QCOMPARE(pooled.sizes(), at::IntArrayRef({3, 3, 2, 2}));
    QCOMPARE(pooled[0][0][0][0].item<float>(), 0.0f);
    QCOMPARE(pooled[0][1][0][0].item<float>(), 2.5f);  // mean of frames 1..4
    QCOMPARE(pooled[0][2][1][1].item<float>(), 6.5f);  // mean of frames 5..8
    QCOMPARE(pooled[1][2][0][1].item<float>(), 6.5f);
    QCOMPARE(pooled[1][2][1][0].item<float>(), 16.5f);
    QVERIFY(errorOf([] { poolVideoToLatentGrid(at::zeros({3, 8, 16, 16}), 4, 8); }).contains("latent grid"));
  }

  void factorsRoundTripThroughSafetensors() {
    const auto path = std::filesystem::temp_directory_path() / "shotchain_test_preview_factors.safetensors";
    LatentRgbFactors f = latentRgbFactors(*models::wanVaeKnowledge().preview);
    f.source = "fitted by the project (test)";
    saveLatentRgbFactors(path, f);
    const LatentRgbFactors back = loadLatentRgbFactors(path);
    QCOMPARE(back.channels(), 16);
    QCOMPARE(back.source, f.source);
    for (int c = 0; c < 16; ++c)
      QVERIFY(back.weights[static_cast<std::size_t>(c)] == f.weights[static_cast<std::size_t>(c)]);
    QVERIFY(back.bias == f.bias);
    std::filesystem::remove(path);
  }

  void previewOfSamplerSteps() {
    // The UI path: every step's x₀ prediction becomes an RGB frame stack without the VAE.
    std::vector<at::Tensor> frames;
    const LatentRgbFactors f = latentRgbFactors(*models::wanVaeKnowledge().preview);
    sampleFlow(denoiser_, kShape, cond_, uncond_, options(3), [&](const StepEvent& e) {
      frames.push_back(latentToRgb8(e.denoised, f));
      return true;
    });
    QCOMPARE(frames.size(), std::size_t{3});
    QCOMPARE(frames.back().sizes(), at::IntArrayRef({3, 8, 8, 3}));
  }
};

SHOTCHAIN_TEST(TestSampler, Core)
#include "test_sampler.moc"
