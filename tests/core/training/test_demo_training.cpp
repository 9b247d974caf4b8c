#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "demo/demo_configs.h"
#include "demo/demo_generation.h"
#include "demo/demo_prompts.h"
#include "demo/demo_weights_io.h"
#include "demo/procedural_clip.h"
#include "io/weight_set.h"
#include "models/umt5/umt5.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "training/adamw_optimizer.h"
#include "training/demo_dit_training.h"
#include "training/demo_trainer.h"
#include "training/demo_vae_training.h"
#include "training/diffusion_forcing_batch.h"
#include "training/flow_matching.h"
#include "training/step_plan.h"

using namespace shotchain;

class TestDemoTraining : public QObject {
  Q_OBJECT

  std::filesystem::path dir_;

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    dir_ = std::filesystem::temp_directory_path() / ("shotchain_test_demo_training_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void cleanupTestCase() { std::filesystem::remove_all(dir_); }

  // The differentiable VAE path computes what the inference path computes.
  void vaeTrainingPathMatchesInference() {
    const models::WanVae vae = models::WanVae::random(demo::demoVaeConfig(), 3);
    const at::Tensor clip = demo::renderClip(demo::randomClipParams(4)).narrow(1, 0, 9);
    const at::NoGradGuard noGrad;
    const models::WanVaeMoments moments = vae.encodeMoments(clip.unsqueeze(0));
    const at::Tensor mu = vae.encode(clip, false);
    QVERIFY(at::allclose(moments.mu.squeeze(0), mu, 1e-4, 1e-5));
    models::VaeDecodeOptions raw;
    raw.clamp = false;
    raw.normalised = false;
    QVERIFY(at::allclose(vae.decodeRaw(mu.unsqueeze(0)).squeeze(0), vae.decode(mu, raw), 1e-4, 1e-5));
  }

  // The handoff term (a chunk latent decoded alone as a first frame) is part of the loss: with it,
  // one step from the same weights and batch moves the VAE elsewhere, and it is reported.
  void vaeHandoffTermChangesTheStep() {
    auto oneStep = [](double handoffWeight) {
      models::WanVae vae = models::WanVae::random(demo::demoVaeConfig(), 7);
      training::VaeTrainingOptions o;
      o.steps = 1;
      o.batch = 1;
      o.cropSize = 16;
      o.objectWeight = 4;
      o.handoffWeight = handoffWeight;
      o.seed = 2;
      const training::VaeTrainingResult r = training::trainDemoVae(vae, o);
      return std::make_pair(r.finalHandoff, vae.namedParameters().back().second.clone());
    };
    const auto [without, weightsWithout] = oneStep(0);
    const auto [with, weightsWith] = oneStep(1);
    const auto [withAgain, weightsWithAgain] = oneStep(1);
    QCOMPARE(without, 0.0);
    QVERIFY(with > 0);
    QVERIFY(!at::equal(weightsWithout, weightsWith));
    QVERIFY(at::equal(weightsWith, weightsWithAgain));  // deterministic
  }

  void vaeGradientsReachEveryParameter() {
    models::WanVae vae = models::WanVae::random(demo::demoVaeConfig(), 5);
    vae.setTrainable(true);
    const at::Tensor video =
        demo::renderClip(demo::randomClipParams(6)).narrow(1, 0, 5).unsqueeze(0).repeat({2, 1, 1, 1, 1});
    const models::WanVaeMoments m = vae.encodeMoments(video);
    (vae.decodeRaw(m.mu) - video).pow(2).mean().add(m.logVar.mean()).backward();
    for (const auto& [name, p] : vae.namedParameters()) {
      QVERIFY2(p.grad().defined(), name.c_str());
    }
    vae.setTrainable(false);
    QVERIFY(!vae.namedParameters().front().second.requires_grad());
  }

  void ditTrainingPathMatchesInferenceAndLearns() {
    models::WanConfig c = demo::demoDitConfig();
    c.numLayers = 1;
    models::WanModel dit = models::WanModel::random(c, 7);
    at::Generator g = at::detail::createCPUGenerator(8);
    const at::Tensor x0 = at::randn({4, c.inDim, 2, 8, 8}, g);
    const at::Tensor context = at::randn({4, 5, c.textDim}, g);
    const training::FlowMatchingBatch batch = training::makeFlowMatchingBatch(x0, 3.0, g);
    QVERIFY(at::allclose(
        batch.noisy,
        (1 - batch.sigma.view({4, 1, 1, 1, 1})) * x0 + batch.sigma.view({4, 1, 1, 1, 1}) * (batch.target + x0), 1e-4,
        1e-5));
    const at::Tensor inference = dit.forwardBatch(batch.noisy, batch.timestep, context);
    dit.setTrainable(true);
    const at::Tensor trained = dit.forwardBatch(batch.noisy, batch.timestep, context);
    QVERIFY(trained.requires_grad());
    QVERIFY(at::allclose(inference, trained.detach(), 1e-4, 1e-5));
    std::vector<at::Tensor> params;
    for (const auto& [n, p] : dit.namedParameters()) params.push_back(p);
    training::AdamWOptimizer optimizer(params, 1e-3, 0.0);
    double first = 0, last = 0;
    for (int step = 0; step < 30; ++step) {
      optimizer.zeroGrad();
      const at::Tensor loss = (dit.forwardBatch(batch.noisy, batch.timestep, context) - batch.target).pow(2).mean();
      loss.backward();
      optimizer.step(1e-3);
      (step == 0 ? first : last) = loss.item<double>();
    }
    qInfo("flow-matching loss on a fixed batch: %.4f → %.4f", first, last);
    QVERIFY(last < 0.8 * first);
    dit.setTrainable(false);
  }

  // Background cells weigh 1, the object's core 1 + weight, a cell half-way to the saturation
  // 1 + weight / 2; per frame and across channels, whatever the background's level.
  void objectLossWeightsFollowTheObject() {
    at::Tensor x0 = at::full({2, 4, 3, 8, 8}, -1.5f);
    x0.select(0, 1).fill_(0.7f);       // the second clip on another background level
    x0[0][0][1][2][5] = 0.5f;          // clip 0, frame 1, cell (2, 5): channel 0 two stds off
    x0[1][3][2][4][4] = 0.7f + 0.25f;  // clip 1, frame 2, cell (4, 4): channel 3 half the saturation off
    const at::Tensor w = training::objectLossWeights(x0, 4.0, 0.5);
    QCOMPARE(w.sizes().vec(), (std::vector<std::int64_t>{2, 1, 3, 8, 8}));
    QCOMPARE(w[0][0][1][2][5].item<float>(), 5.0f);
    QCOMPARE(w[1][0][2][4][4].item<float>(), 3.0f);
    QCOMPARE(w.sum().item<float>(), static_cast<float>(w.numel() - 2) + 5.0f + 3.0f);
    QVERIFY(!w.requires_grad());
  }

  // Where the shape word matters: off the object's centre and off the background, on its outline.
  void shapeDisagreementFollowsTheOutline() {
    demo::ClipParams still;
    still.direction = demo::Direction::Still;
    still.speed = 0;
    still.x0 = still.y0 = 32;
    still.radius = 8;
    const at::Tensor mask = demo::shapeDisagreementMask(still);
    QCOMPARE(mask.sizes().vec(), (std::vector<std::int64_t>{1, 17, 64, 64}));
    QCOMPARE(mask[0][5][32][32].item<float>(), 0.0f);  // every shape covers the centre
    QCOMPARE(mask[0][5][2][2].item<float>(), 0.0f);    // none covers the far corner
    QCOMPARE(mask[0][5][38][38].item<float>(), 1.0f);  // the triangle's flank, outside the circle and the bar
    QCOMPARE(mask[0][5][24][31].item<float>(), 1.0f);  // the circle's top, above the bar and the triangle's apex
    QVERIFY(at::equal(mask.select(1, 0), mask.select(1, 16)));  // still: the same every frame

    const at::Tensor w = training::shapeLossWeights(at::tensor(std::vector<float>{0, 0.125f, 0.25f, 0.9f}), 8.0);
    QVERIFY(at::allclose(w, at::tensor(std::vector<float>{0, 4, 8, 8})));
  }

  // Diffusion-forcing batches: a prefix is the clip's own latents, at timestep 0 or lightly noised (at
  // most recipe.prefixNoise), and out of the loss; a chain window takes the first clip's last latents and
  // the second clip's prompt; the other frames are noised at their own σ.
  void diffusionForcingBatchesHoldCleanPrefixes() {
    at::Generator g = at::detail::createCPUGenerator(4);
    const std::int64_t n = 6, window = 5;
    const at::Tensor latents = at::randn({n, 4, 9, 4, 4}, g);
    const at::Tensor first = at::arange(n, at::TensorOptions().dtype(at::kLong));
    const at::Tensor second = first + 100;
    training::DiffusionForcingRecipe recipe;
    recipe.window = window;
    const at::Tensor index = at::randint(n, {256}, g, at::TensorOptions().dtype(at::kLong));
    const training::DiffusionForcingBatch b =
        training::makeDiffusionForcingBatch(latents, index, first, second, recipe, 3.0, g);
    QCOMPARE(b.timestep.sizes().vec(), (std::vector<std::int64_t>{256, window}));
    QCOMPARE(b.lossMask.sizes().vec(), (std::vector<std::int64_t>{256, 1, window, 1, 1}));
    int chains = 0, prefixed = 0, shared = 0, perFrame = 0, noisedPrefix = 0, cleanPrefix = 0;
    for (std::int64_t k = 0; k < 256; ++k) {
      const std::int64_t i = index[k].item<std::int64_t>();
      const bool chain = b.promptRow[k].item<std::int64_t>() == i + 100;
      QVERIFY(chain || b.promptRow[k].item<std::int64_t>() == i);
      const at::Tensor mask = b.lossMask[k].flatten();
      const std::int64_t prefix = window - mask.sum().item<std::int64_t>();
      QVERIFY(prefix >= 0 && prefix <= 2);
      if (chain) QVERIFY(prefix >= 1);
      const std::int64_t start = chain ? window - prefix : 0;
      QVERIFY(at::equal(b.x0[k], latents[i].narrow(1, start, window)));
      for (std::int64_t f = 0; f < window; ++f) {
        const bool held = f < prefix;
        const float t = b.timestep[k][f].item<float>();
        QCOMPARE(mask[f].item<float>(), held ? 0.0f : 1.0f);
        if (held) {
          QVERIFY(t >= 0 && t <= 1000 * recipe.prefixNoise + 1e-3);
          QCOMPARE(t, b.timestep[k][0].item<float>());  // one level for the whole prefix
          if (t == 0) QVERIFY(at::equal(b.noisy[k].select(1, f), b.x0[k].select(1, f)));
        } else {
          QVERIFY(t > 0);
        }
        const float s = b.timestep[k][f].item<float>() / 1000;
        QVERIFY(at::allclose(b.noisy[k].select(1, f),
                             (1 - s) * b.x0[k].select(1, f) + s * (b.target[k].select(1, f) + b.x0[k].select(1, f)),
                             1e-4, 1e-5));
      }
      chains += chain;
      prefixed += !chain && prefix > 0;
      if (prefix > 0) (b.timestep[k][0].item<float>() > 0 ? noisedPrefix : cleanPrefix) += 1;
      const at::Tensor noisy = b.timestep[k].narrow(0, prefix, window - prefix);
      if (noisy.numel() > 1) (at::equal(noisy, noisy[0].expand_as(noisy)) ? shared : perFrame) += 1;
    }
    qInfo("256 windows: %d across a chain's cut, %d with a prefix of one clip; %d share one sigma, %d one per frame",
          chains, prefixed, shared, perFrame);
    QVERIFY(chains > 256 * recipe.chainShare * 0.7 && chains < 256 * recipe.chainShare * 1.3);
    const double single = 256 * (1 - recipe.chainShare) * recipe.prefixShare;
    QVERIFY(prefixed > single * 0.6 && prefixed < single * 1.4);
    QVERIFY(shared > 80 && perFrame > 80);
    QVERIFY(noisedPrefix > 30 && cleanPrefix > 30);

    // Clips without a second one (F == window): no chain windows.
    const training::DiffusionForcingBatch alone =
        training::makeDiffusionForcingBatch(latents.narrow(2, 0, window), index, first, at::Tensor(), recipe, 3.0, g);
    QVERIFY(at::equal(alone.promptRow, index));
  }

  void shiftedSigmasFollowTheShift() {
    at::Generator g = at::detail::createCPUGenerator(1);
    const at::Tensor s1 = training::sampleShiftedSigmas(20000, 1.0, g),
                     s3 = training::sampleShiftedSigmas(20000, 3.0, g);
    QVERIFY(s1.min().item<float>() >= 0 && s3.max().item<float>() <= 1);
    QVERIFY(std::abs(s1.mean().item<float>() - 0.5f) < 0.02f);
    QVERIFY(s3.mean().item<float>() > 0.6f);  // shift > 1 spends more samples at high noise
  }

  // The cap plans from the first steps' pace and re-plans once the pace settles, up or down,
  // never past the request.
  void stepPlanFitsTheCap() {
    training::StepPlan uncapped(1000, 0, 10, 200, 20);
    QVERIFY(!uncapped.update(10, 50.0));
    QCOMPARE(uncapped.total(), 1000L);

    training::StepPlan plan(100000, 1000, 10, 200, 20);
    QVERIFY(!plan.update(5, 10.0));
    QVERIFY(plan.update(10, 20.0));  // 2 s per step so far: 500 fit
    QCOMPARE(plan.total(), 500L);
    QVERIFY(plan.update(200, 210.0));  // 1 s per step since: 200 + 790
    QCOMPARE(plan.total(), 990L);
    QVERIFY(!plan.update(300, 310.0));  // between checks
    QVERIFY(!plan.update(400, 410.0));  // the pace held: 990 still fit
    QCOMPARE(plan.total(), 990L);
    QVERIFY(plan.update(600, 810.0));  // 2 s per step since 400: 600 + 95, the cosine ends in the cap
    QCOMPARE(plan.total(), 695L);
    QVERIFY(!plan.update(800, 811.0));  // past the end of the plan: no growing back
    QCOMPARE(plan.total(), 695L);

    training::StepPlan slower(100000, 1000, 10, 200, 20);
    slower.update(10, 10.0);
    QCOMPARE(slower.total(), 1000L);
    slower.update(200, 960.0);  // 5 s per step since: only 8 more fit
    QCOMPARE(slower.total(), 208L);

    training::StepPlan small(300, 1000, 10, 200, 20);
    small.update(10, 1.0);
    QCOMPARE(small.total(), 300L);  // the request, not the 10000 that would fit
    training::StepPlan late(100000, 100, 10, 200, 20);
    late.update(10, 99.0);
    QCOMPARE(late.total(), 20L);  // the minimum
  }

  // Saved weights carry their config and the VAE's latent statistics; the real loaders read them.
  void weightsRoundTripThroughTheLoaders() {
    models::WanVae vae = models::WanVae::random(demo::demoVaeConfig(), 9);
    const int channels = static_cast<int>(vae.config().zDim);
    std::vector<double> mean(static_cast<std::size_t>(channels)), deviation(static_cast<std::size_t>(channels));
    for (int i = 0; i < channels; ++i) {
      mean[static_cast<std::size_t>(i)] = 0.1 * i;
      deviation[static_cast<std::size_t>(i)] = 0.5 + 0.05 * i;
    }
    vae.setLatentStatistics(mean, deviation);
    demo::saveVae(dir_ / "vae.safetensors", vae);
    const models::WanVae loaded = models::WanVae::load(io::WeightSet::open(dir_ / "vae.safetensors"));
    QCOMPARE(loaded.config().toJson(), demo::demoVaeConfig().toJson());
    for (int i = 0; i < channels; ++i)
      QVERIFY(std::abs(loaded.latentStd()[static_cast<std::size_t>(i)] - deviation[static_cast<std::size_t>(i)]) <
              1e-6);
    const at::Tensor clip = demo::renderClip(demo::randomClipParams(1));
    const at::Tensor raw = vae.encode(clip, false), normalised = loaded.encode(clip);
    QVERIFY(at::allclose(normalised.select(0, 3), (raw.select(0, 3) - 0.3) / 0.65, 1e-4, 1e-4));

    const models::WanConfig c = demo::demoDitConfig();
    demo::saveDit(dir_ / "dit.safetensors", models::WanModel::random(c, 1).namedParameters(), c);
    QCOMPARE(models::WanModel::load(io::WeightSet::open(dir_ / "dit.safetensors")).config().toJson(), c.toJson());

    demo::saveUmt5(dir_ / "te.safetensors", models::Umt5Encoder::random(demo::demoUmt5Config(), 2));
    const models::Umt5Encoder te = models::Umt5Encoder::load(io::WeightSet::open(dir_ / "te.safetensors"));
    QCOMPARE(te.config().dim, demo::demoUmt5Config().dim);
    QCOMPARE(te.config().numLayers, demo::demoUmt5Config().numLayers);
  }

  // The whole recipe, a few steps of each phase, with a VAE of 8× (not the demo's 4×) spatial
  // compression and 16 latent channels: every phase follows the VAE's own factors, and the written
  // files load and render.
  void wholeRecipeFollowsTheVaeFactors() {
    training::DemoTrainOptions o;
    o.outDir = dir_ / "recipe";
    o.vaeSteps = 2;
    o.ditSteps = 2;
    o.latentClips = 4;
    o.vaeConfig.dimMult = {1, 2, 4, 4};
    o.vaeConfig.temporalDownsample = {false, true, true};
    o.vaeConfig.zDim = 16;
    o.ditConfig.patch = {1, 2, 2};
    o.ditConfig.inDim = o.ditConfig.outDim = 16;
    o.ditConfig.numLayers = 1;
    QVERIFY(o.vaeConfig.spatialFactor() != demo::demoVaeConfig().spatialFactor());
    training::trainDemoModel(o);
    const demo::DemoModels loaded = demo::DemoModels::load(o.outDir);
    QCOMPARE(loaded.vae->config().spatialFactor(), std::int64_t{8});
    QCOMPARE(loaded.vae->config().zDim, std::int64_t{16});
    demo::DemoShotSettings settings;
    settings.steps = 2;
    const demo::DemoShot shot = demo::generateDemoShot(loaded, demo::allDemoPrompts().front(), 1, settings);
    QCOMPARE(shot.frames.sizes().vec(), (std::vector<std::int64_t>{3, 17, 64, 64}));

    // A new DiT on those files: the tokenizer, text encoder, VAE and preview factors stay byte for
    // byte, the DiT is trained again from its random start.
    auto bytes = [&](const char* name) {
      std::ifstream in(o.outDir / name, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const char* kept[] = {demo::kTokenizerFile, demo::kTextEncoderFile, demo::kVaeFile, demo::kLatentRgbFile};
    std::vector<std::string> before;
    for (const char* name : kept) before.push_back(bytes(name));
    const std::string ditBefore = bytes(demo::kDitFile);
    training::DemoTrainOptions again = o;
    again.newDit = true;
    again.ditSteps = 3;
    QVERIFY(again.ditConfig.takesPerFrameTimesteps());  // diffusion forcing on two-clip chains
    const training::DemoTrainReport report = training::trainDemoModel(again);
    QCOMPARE(report.vae.steps, 0L);
    QCOMPARE(report.dit.steps, 3L);
    for (std::size_t i = 0; i < before.size(); ++i) QVERIFY2(bytes(kept[i]) == before[i], kept[i]);
    QVERIFY(bytes(demo::kDitFile) != ditBefore);
    QCOMPARE(demo::DemoModels::load(o.outDir).dit->config().toJson(), o.ditConfig.toJson());

    // A one-timestep DiT with the shape-disagreement weighting (run 9's recipe); that weighting is
    // refused with diffusion forcing.
    training::DemoTrainOptions plain = again;
    plain.ditConfig.diffusionForcing = false;
    plain.ditConfig.causalBlockSize = 0;
    plain.shapeWeight = 8;
    QCOMPARE(training::trainDemoModel(plain).dit.steps, 3L);
    QVERIFY(!demo::DemoModels::load(o.outDir).dit->capabilities().perFrameTimesteps);
    training::DemoTrainOptions shaped = again;
    shaped.shapeWeight = 8;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, training::trainDemoModel(shaped));
    QVERIFY(training::trainDemoModel(again).dit.steps == 3);

    // A keyframe DiT on the same files: the I2V condition's channels follow this VAE (4 mask + 16 latent).
    training::DemoTrainOptions keyframes = o;
    keyframes.keyframes = true;
    keyframes.ditSteps = 3;
    const training::DemoTrainReport keyframed = training::trainDemoModel(keyframes);
    QCOMPARE(keyframed.dit.steps, 3L);
    QVERIFY(std::isfinite(keyframed.dit.finalLoss));
    for (std::size_t i = 0; i < before.size(); ++i) QVERIFY2(bytes(kept[i]) == before[i], kept[i]);
    const models::WanConfig i2v = demo::DemoModels::load(o.outDir).dit->config();
    QCOMPARE(i2v.modelType, std::string("i2v"));
    QCOMPARE(i2v.imageConditionChannels(), std::int64_t{4 + 16});
    QVERIFY(!i2v.takesPerFrameTimesteps());
    QVERIFY(training::trainDemoModel(again).dit.steps == 3);

    training::DemoTrainOptions unfit = again;
    unfit.ditConfig = demo::demoDitConfig();  // in_dim 4 against the kept VAE's z_dim 16
    const std::string ditNow = bytes(demo::kDitFile);
    try {
      training::trainDemoModel(unfit);
      QFAIL("a DiT that does not fit the kept VAE was trained");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("z_dim 16") != std::string::npos, e.what());
    }
    QVERIFY(bytes(demo::kDitFile) == ditNow);

    training::DemoTrainOptions both = again;
    both.resumeDit = true;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, training::trainDemoModel(both));
    QVERIFY(bytes(demo::kDitFile) == ditNow);
  }

  // Sizes that cannot work together are refused before any phase runs, naming the field; nothing is written.
  void mismatchedSizesAreRefusedUpFront() {
    auto refusal = [&](const training::DemoTrainOptions& o) {
      try {
        training::trainDemoModel(o);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    training::DemoTrainOptions channels;
    channels.outDir = dir_ / "refused";
    channels.ditConfig.inDim = channels.ditConfig.outDim = channels.vaeConfig.zDim + 1;
    QVERIFY2(refusal(channels).find("in_dim/out_dim") != std::string::npos, refusal(channels).c_str());
    training::DemoTrainOptions patch;
    patch.outDir = dir_ / "refused";
    patch.ditConfig.patch = {1, 3, 3};
    QVERIFY2(refusal(patch).find("patch_size[1] 3") != std::string::npos, refusal(patch).c_str());
    training::DemoTrainOptions negative;
    negative.outDir = dir_ / "refused";
    negative.shapeWeight = -1;
    QVERIFY2(refusal(negative).find("--shape-weight must be 0 or more") != std::string::npos,
             refusal(negative).c_str());
    QVERIFY(!std::filesystem::exists(dir_ / "refused"));
  }
};

SHOTCHAIN_TEST(TestDemoTraining, Core)
#include "test_demo_training.moc"
