#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "golden_compare.h"
#include "io/weight_set.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "sampling/sampler.h"
#include "sampling/step_cache.h"
#include "sampling/step_cache_rules.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::sampling;
using shotchain::testing::golden;

class TestStepCache : public QObject {
  Q_OBJECT

  std::optional<models::WanModel> model_;
  at::Tensor cond_, uncond_;
  const std::vector<std::int64_t> shape_{16, 3, 8, 8};

  SampleResult run(StepCache* cache, int steps = 12, bool split = false) {
    SamplerOptions o;
    o.steps = steps;
    o.guidance = 5.0;
    o.seed = 7;
    o.splitGuidance = split;
    o.stepCache = cache;
    const models::BlockCacheScope scope(*model_, cache && !cache->skipsWholeCalls() ? cache : nullptr);
    return sampleFlow(ditDenoiser(*model_), shape_, cond_, uncond_, o);
  }

 private Q_SLOTS:
  void initTestCase() {
    const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
    model_.emplace(
        models::WanModel::load(weights, models::WanLoadOptions{at::kFloat, at::kCPU, models::AttentionImpl::Auto}));
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(99);
    cond_ = at::randn({7, 48}, g);
    uncond_ = at::randn({11, 48}, g);
  }

  void teaCachePolynomialAccumulatesAndResets() {
    // poly1d([1, 0, 2])(x) = x² + 2; with coefficients {0, 0, 0, 1, 0} it is x itself.
    QCOMPARE(evaluatePolynomial({1, 0, 2}, 3.0), 11.0);
    TeaCacheRule rule({0, 0, 0, 1, 0}, 0.25, 2, 8);
    const double change[] = {0, 0, 0.1, 0.1, 0.1, 0.3, 0.05, 0.05};
    // step 0,1 warm-up; 2: 0.1 < .25 skip; 3: 0.2 skip; 4: 0.3 ≥ .25 compute (reset);
    // 5: 0.3 compute (reset); 6: 0.05 skip; 7: last step, computed.
    const bool expected[] = {true, true, false, false, true, true, false, true};
    for (int s = 0; s < 8; ++s) QCOMPARE(rule.compute(s, change[s]), expected[s]);
    // The published 1.3B polynomial at a relative change of 0.1 (numpy.poly1d by hand).
    const models::PublishedCacheTable* published =
        models::publishedCacheTable(models::wanT2vKnowledge(), models::kWan21T2v1_3B);
    QVERIFY(published);
    const std::vector<double> c(published->teaCacheCoefficients.begin(), published->teaCacheCoefficients.end());
    const double x = 0.1;
    QVERIFY(std::abs(evaluatePolynomial(c, x) -
                     (c[0] * x * x * x * x + c[1] * x * x * x + c[2] * x * x + c[3] * x + c[4])) < 1e-9);
  }

  void magCacheAccumulatesTheRatioError() {
    // ratios 0.9 from step 2: step 2: ratio .9, err .1 < .25, skipped 1 → skip; step 3: ratio .81, err .1+.19=.29
    // ≥ .25 → compute, reset; step 4: skip (.1); step 5: .29 → compute; 6: skip; 7: last, computed.
    MagCacheRule rule(std::vector<double>(8, 0.9), 0.25, 2, 2);
    const bool expected[] = {true, true, false, true, false, true, false, true};
    for (int s = 0; s < 8; ++s) QCOMPARE(rule.compute(s), expected[s]);
    // K = 2 stops a run of skips: ratios 1.0 never accumulate error.
    MagCacheRule flat(std::vector<double>(8, 1.0), 0.25, 2, 1);
    const bool capped[] = {true, false, false, true, false, false, true, true};
    for (int s = 0; s < 8; ++s) QCOMPARE(flat.compute(s), capped[s]);
    // The published table: 50 steps a branch, two leading 1.0, resampled by nearest index.
    const models::PublishedCacheTable* published =
        models::publishedCacheTable(models::wanT2vKnowledge(), models::kWan21T2v1_3B);
    QVERIFY(published);
    const std::vector<double> table(published->magCacheRatios.begin(), published->magCacheRatios.end());
    QCOMPARE(table.size(), std::size_t{100});
    QCOMPARE(table[2], 1.0124);
    const std::vector<double> cond = branchRatios(table, 0, 4);  // indices round(i·49/3) = 0, 16, 33, 49
    QCOMPARE(cond.size(), std::size_t{4});
    QCOMPARE(cond[0], table[0]);
    QCOMPARE(cond[1], table[32]);
    QCOMPARE(cond[2], table[66]);
    QCOMPARE(cond[3], table[98]);
  }

  void easyCachePredictsFromTheTransformationRate() {
    EasyCacheRule rule(0.1, 2, 10);
    QVERIFY(rule.compute(0, 0, 1));
    rule.computed(std::nullopt, std::nullopt);
    QVERIFY(rule.compute(1, 0.5, 1));
    rule.computed(0.2, 0.4);  // k = 0.2 / 0.4 = 0.5
    QCOMPARE(*rule.rate(), 0.5);
    QVERIFY(!rule.compute(2, 0.1, 1.0));  // 0.5·0.1/1 = 0.05 < 0.1: skip
    QVERIFY(rule.compute(3, 0.12, 1.0));  // 0.05 + 0.06 = 0.11 ≥ 0.1: compute, reset
    QCOMPARE(rule.accumulated(), 0.0);
    QVERIFY(!rule.compute(4, 0.1, 2.0));  // 0.025
    QVERIFY(rule.compute(9, 0.0, 1.0));   // the last step
  }

  void firstBlockComparesWithTheLastComputedStep() {
    const FirstBlockRule rule(0.05, 1, 6);
    QVERIFY(rule.compute(0, 0.0));
    QVERIFY(!rule.compute(1, 0.04));
    QVERIFY(rule.compute(2, 0.05));
    QVERIFY(rule.compute(5, 0.0));
  }

  void aCacheThatNeverSkipsChangesNoBit() {
    const SampleResult plain = run(nullptr);
    for (const StepCachePolicy rule :
         {StepCachePolicy::TeaCache, StepCachePolicy::FirstBlock, StepCachePolicy::EasyCache}) {
      StepCacheConfig config;
      config.policy = rule;
      config.threshold = 1e-12;
      config.steps = 12;
      config.warmup = 1;
      StepCache cache(config);
      const SampleResult cached = run(&cache);
      QVERIFY2(at::equal(plain.latent, cached.latent), toString(rule));
      QCOMPARE(cache.skippedPasses(), 0);
      QCOMPARE(cache.computedPasses(), 24);
    }
  }

  void skippedStepsReuseTheResidualAndSayWhich() {
    const SampleResult plain = run(nullptr, 20);
    for (const StepCachePolicy rule : {StepCachePolicy::TeaCache, StepCachePolicy::MagCache, StepCachePolicy::EasyCache,
                                       StepCachePolicy::FirstBlock}) {
      StepCacheConfig config;
      config.policy = rule;
      // The tiny golden model's modulation moves ~0.8 (relative) a step; a real Wan's a few percent.
      config.threshold = rule == StepCachePolicy::TeaCache    ? 2.0
                         : rule == StepCachePolicy::MagCache  ? 0.5
                         : rule == StepCachePolicy::EasyCache ? 1.0
                                                              : 0.8;
      config.steps = 20;
      config.warmup = 3;
      config.magCacheRatios = std::vector<double>(40, 0.97);
      StepCache cache(config);
      const SampleResult cached = run(&cache, 20);
      const std::string cond = cache.pattern(0);
      QCOMPARE(static_cast<int>(cond.size()), 20);
      QVERIFY2(cond.substr(0, 3) == "CCC" && cond.back() == 'C', cond.c_str());
      QVERIFY2(cache.skippedPasses() > 0, qPrintable(QString("%1: %2").arg(toString(rule), cond.c_str())));
      QCOMPARE(cache.skippedPasses() + cache.computedPasses(), 40);
      // Close to the full run, not equal to it.
      const double error =
          (cached.latent - plain.latent).abs().mean().item<double>() / plain.latent.abs().mean().item<double>();
      QVERIFY2(error > 0 && error < 0.5, qPrintable(QString("%1: %2").arg(toString(rule)).arg(error)));
    }
  }

  void splitGuidanceKeepsTheBranchesApart() {
    StepCacheConfig config;
    config.policy = StepCachePolicy::FirstBlock;
    config.threshold = 0.8;
    config.steps = 20;
    config.warmup = 3;
    StepCache batched(config), split(config);
    const SampleResult a = run(&batched, 20, false);
    const SampleResult b = run(&split, 20, true);
    QCOMPARE(batched.pattern(0), split.pattern(0));
    QCOMPARE(batched.pattern(1), split.pattern(1));
    QVERIFY(batched.skippedPasses() > 0);
    QVERIFY((a.latent - b.latent).abs().max().item<double>() < 1e-4);
  }

  void calibrationRecordsEveryStep() {
    StepCacheConfig config;
    config.record = true;
    config.steps = 6;
    StepCache cache(config);
    const SampleResult plain = run(nullptr, 6);
    const SampleResult recorded = run(&cache, 6);
    QVERIFY(at::equal(plain.latent, recorded.latent));
    for (int b = 0; b < 2; ++b) {
      QCOMPARE(cache.trace(b).magnitudeRatio.size(), std::size_t{6});
      QCOMPARE(cache.trace(b).modulationChange.size(), std::size_t{6});
      QCOMPARE(cache.trace(b).magnitudeRatio[0], 1.0);
      QVERIFY(cache.trace(b).magnitudeRatio[3] > 0);
    }
  }
};

SHOTCHAIN_TEST(TestStepCache, Core)
#include "test_step_cache.moc"
