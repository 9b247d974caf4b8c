// Step caching through the real renderer on tiny random Wan models written by the test: off
// changes nothing, a policy skips passes and says so in the events, shot.json and report.json, a
// calibration render records every step, and what cannot be applied says why.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "golden_model_facts.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_key.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "sampling/cache_calibration.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"
#include "util/atomic_file.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

struct Collecting : render::RenderObserver {
  std::vector<render::RenderWarning> warnings;
  void warning(const render::RenderWarning& w) override { warnings.push_back(w); }
};

StepCacheSettings cacheOf(StepCachePolicy policy, std::optional<double> threshold = {}) {
  StepCacheSettings cache;
  cache.policy = policy;
  cache.threshold = threshold;
  return cache;
}

}  // namespace

class StepCacheRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<TinyModelSet> wan_, df_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  Sequence chain(const TinyModelSet& models) const {
    Sequence s;
    s.settings.model = models.modelSet();
    s.settings.sampler.steps = 12;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1, ContinuityMode::None), tinyShot("b", 2, ContinuityMode::Latent)};
    return s;
  }

  render::RenderOptions options(const std::string& out) const {
    render::RenderOptions o;
    o.outputDirectory = root() / out;
    o.sequenceDirectory = root();
    o.framesOnDisk = false;
    o.previews = false;
    return o;
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU);
    QTEST_ASSERT(t.has_value());
    return t->latent;
  }

  render::RenderSummary render(const Sequence& sequence, const std::string& out, Collecting* observer = nullptr) const {
    Collecting own;
    render::Renderer renderer;
    render::RenderSummary summary = renderer.render(sequence, options(out), observer ? *observer : own);
    QTEST_ASSERT(summary.finished.completed);
    return summary;
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    wan_ = writeTinyModelSet(root() / "wan", 21, false);
    df_ = writeTinyModelSet(root() / "df", 21, true);
  }

  void offIsTheRenderOfBefore() {
    for (const TinyModelSet* models : {&*wan_, &*df_}) {
      Sequence plain = chain(*models);
      Sequence off = plain;
      off.settings.sampler.cache = cacheOf(StepCachePolicy::Off, 0.3);
      off.shots[0].cache = cacheOf(StepCachePolicy::Off);
      QCOMPARE(testing::shotKeysOf(off, root()), testing::shotKeysOf(plain, root()));
      const render::RenderSummary a = render(plain, "plain.render");
      const render::RenderSummary b = render(off, "off.render");
      for (int i = 0; i < 2; ++i) {
        QVERIFY(!b.shots[static_cast<std::size_t>(i)].cache.has_value());
        const std::string id = plain.shots[static_cast<std::size_t>(i)].id;
        QVERIFY(at::equal(tail("plain.render", i, id), tail("off.render", i, id)));
      }
      // The report has no cache figures, and says the cache was off as resolved.
      const nlohmann::json report = nlohmann::json::parse(readFile(root() / "off.render" / "report.json"));
      for (const nlohmann::json& shot : report["shots"]) {
        QVERIFY(!shot.contains("cache"));
        QCOMPARE(shot["resolved"]["cache"]["policy"].get<std::string>(), std::string("off"));
      }
    }
  }

  void aPolicySkipsPassesAndSaysWhich() {
    for (const TinyModelSet* models : {&*wan_, &*df_}) {
      const Sequence plain = chain(*models);
      Sequence cached = plain;
      cached.settings.sampler.cache = cacheOf(StepCachePolicy::FirstBlock, 0.8);
      QVERIFY(testing::shotKeysOf(cached, root()) != testing::shotKeysOf(plain, root()));
      render(plain, "plain.render");
      const render::RenderSummary summary = render(cached, "cached.render");
      for (int i = 0; i < 2; ++i) {
        const render::ShotFinished& shot = summary.shots[static_cast<std::size_t>(i)];
        QVERIFY(shot.cache.has_value());
        const render::StepCacheFigures& c = *shot.cache;
        QVERIFY2(c.off.empty(), c.off.c_str());
        QCOMPARE(c.policy, std::string("first_block"));
        QCOMPARE(c.computedPasses + c.skippedPasses, 24);
        QVERIFY2(c.skippedPasses > 0, c.pattern.c_str());
        QCOMPARE(static_cast<int>(c.pattern.size()), 12);
        QCOMPARE(c.pattern.back(), 'C');
        const std::string id = plain.shots[static_cast<std::size_t>(i)].id;
        const at::Tensor full = tail("plain.render", i, id), skipped = tail("cached.render", i, id);
        const double error = (skipped - full).abs().mean().item<double>() / full.abs().mean().item<double>();
        QVERIFY2(error > 0 && error < 0.5, qPrintable(QString::number(error)));
        const auto record = render::readShotRecord(render::shotDirectory(root() / "cached.render", i, id));
        QVERIFY(record && record->cache);
        QCOMPARE(record->cache->pattern, c.pattern);
      }
      const auto report = nlohmann::json::parse(readFile(root() / "cached.render" / "report.json"));
      QCOMPARE(report["shots"][1]["cache"]["skipped_passes"].get<int>(), summary.shots[1].cache->skippedPasses);
    }
  }

  void aShotOverridesTheSequence() {
    Sequence s = chain(*wan_);
    s.settings.sampler.cache = cacheOf(StepCachePolicy::EasyCache, 1.0);
    s.shots[1].cache = cacheOf(StepCachePolicy::Off);
    const render::RenderSummary summary = render(s, "override.render");
    QVERIFY(summary.shots[0].cache.has_value());
    QCOMPARE(summary.shots[0].cache->policy, std::string("easycache"));
    QVERIFY(!summary.shots[1].cache.has_value());
  }

  void magCacheWithoutRatiosIsOffAndSaysWhy() {
    Sequence s = chain(*wan_);
    s.settings.sampler.cache = cacheOf(StepCachePolicy::MagCache);
    Collecting observer;
    const render::RenderSummary summary = render(s, "mag.render", &observer);
    QVERIFY(summary.shots[0].cache.has_value());
    QVERIFY2(summary.shots[0].cache->off.find("calibrate-cache") != std::string::npos,
             summary.shots[0].cache->off.c_str());
    QCOMPARE(summary.shots[0].cache->skippedPasses, 0);
    bool warned = false;
    for (const render::RenderWarning& w : observer.warnings) warned = warned || (w.kind == "cache" && w.shotIndex == 0);
    QVERIFY(warned);
    render(chain(*wan_), "plain.render");
    QVERIFY(at::equal(tail("mag.render", 0, "a"), tail("plain.render", 0, "a")));
  }

  void aStaggeredScheduleIsOff() {
    Sequence s = chain(*df_);
    s.settings.sampler.arStep = 2;
    s.settings.sampler.cache = cacheOf(StepCachePolicy::TeaCache);
    const render::RenderSummary summary = render(s, "staggered.render");
    QVERIFY(summary.shots[1].cache.has_value());
    QVERIFY2(summary.shots[1].cache->off.find("ar_step") != std::string::npos, summary.shots[1].cache->off.c_str());
  }

  void calibrationFeedsMagCache() {
    Sequence s = chain(*wan_);
    render::RenderOptions o = options("calibrate.render");
    o.calibrateCache = true;
    o.writesFiles = false;
    Collecting observer;
    render::Renderer renderer;
    const render::RenderSummary summary = renderer.render(s, o, observer);
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.calibrationRuns.size(), std::size_t{2});
    QVERIFY(!std::filesystem::exists(root() / "calibrate.render" / "report.json"));
    std::vector<const sampling::StepCache*> runs;
    for (const auto& run : summary.calibrationRuns) runs.push_back(run.cache.get());
    const sampling::CacheCalibration fitted = sampling::fitCacheCalibration(runs, summary.calibratedFamily, 5.0);
    QCOMPARE(fitted.magCacheRatios.size(), std::size_t{24});
    QCOMPARE(fitted.magCacheRatios[0], 1.0);
    QCOMPARE(fitted.teaCacheCoefficients.size(), std::size_t{5});
    QCOMPARE(fitted.model, summary.calibratedFamily);
    util::writeFileAtomically(root() / "tiny.cache.json", sampling::cacheCalibrationJson(fitted));
    const sampling::CacheCalibration back = sampling::readCacheCalibration(root() / "tiny.cache.json");
    QCOMPARE(back.magCacheRatios, fitted.magCacheRatios);

    s.settings.sampler.cache = cacheOf(StepCachePolicy::MagCache, 0.5);
    s.settings.sampler.cache.calibration = "tiny.cache.json";
    const render::RenderSummary cached = render(s, "calibrated.render");
    QVERIFY2(cached.shots[0].cache->off.empty(), cached.shots[0].cache->off.c_str());
    QVERIFY2(cached.shots[0].cache->skippedPasses > 0, cached.shots[0].cache->pattern.c_str());
    QVERIFY(cached.shots[0].cache->source.find("tiny.cache.json") != std::string::npos);
    // A changed calibration file is a changed shot.
    const auto before = testing::shotKeysOf(s, root());
    sampling::CacheCalibration other = fitted;
    other.magCacheRatios[5] *= 0.5;
    util::writeFileAtomically(root() / "tiny.cache.json", sampling::cacheCalibrationJson(other));
    QVERIFY(testing::shotKeysOf(s, root()) != before);
  }
};

SHOTCHAIN_TEST(StepCacheRenderTest, Core)
#include "test_step_cache_render.moc"
