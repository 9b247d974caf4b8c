#include <QTest>

#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "continuity/cut_measures.h"
#include "continuity/frame_measures.h"
#include "continuity/latent_ops.h"
#include "continuity/shot_stats.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::continuity;
using shotchain::testing::errorOf;

namespace {

// A frame [3, H, W] in [−1, 1] whose RGB (in [0, 1]) is `unit` everywhere.
at::Tensor solid(double r, double g, double b, std::int64_t h = 16, std::int64_t w = 16) {
  at::Tensor f = at::empty({3, h, w}, at::kDouble);
  f[0].fill_(2 * r - 1);
  f[1].fill_(2 * g - 1);
  f[2].fill_(2 * b - 1);
  return f;
}

at::Tensor grey(double v, std::int64_t h = 16, std::int64_t w = 16) { return solid(v, v, v, h, w); }

// [3, T, H, W] of grey frames with the given luma values.
at::Tensor greyClip(const std::vector<double>& values) {
  std::vector<at::Tensor> frames;
  for (const double v : values) frames.push_back(grey(v).unsqueeze(1));
  return at::cat(frames, 1);
}

// A latent [C, F, h, w] whose frame f is the constant values[f] in every channel.
at::Tensor constantFrames(const std::vector<double>& values, std::int64_t channels = 2) {
  std::vector<at::Tensor> frames;
  for (const double v : values) frames.push_back(at::full({channels, 1, 2, 2}, v, at::kDouble));
  return at::cat(frames, 1);
}

bool near(double a, double b, double tol) { return std::abs(a - b) <= tol; }

}  // namespace

class TestContinuityMeasures : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void identicalFramesPsnrInfiniteSsimOne() {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(3);
    const at::Tensor a = at::rand({3, 24, 20}, g) * 2 - 1;
    QVERIFY(std::isinf(psnrLuma(a, a)) && psnrLuma(a, a) > 0);
    QCOMPARE(ssimLuma(a, a), 1.0);
    QCOMPARE(madLuma(a, a), 0.0);
    const at::Tensor b = at::rand({3, 24, 20}, g) * 2 - 1;
    const double s = ssimLuma(a, b);
    QVERIFY2(s < 0.2 && s > -0.2, qPrintable(QString::number(s)));  // independent noise
  }

  void knownShift() {
    // Luma weights sum to 1, so a shift of every channel by d shifts luma by d: MSE d², PSNR −20·log10 d.
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(4);
    const at::Tensor unit = at::rand({3, 32, 32}, g, at::TensorOptions().dtype(at::kDouble)) * 0.8;
    const at::Tensor a = unit * 2 - 1, b = (unit + 0.1) * 2 - 1;
    QVERIFY(near(psnrLuma(a, b), 20.0, 1e-9));
    QVERIFY(near(madLuma(a, b), 0.1, 1e-12));
    // Constant frames: σ = 0, so SSIM = (2xy + C1)/(x² + y² + C1).
    const double c1 = 1e-4;
    QVERIFY(near(ssimLuma(grey(0.4), grey(0.5)), (2 * 0.4 * 0.5 + c1) / (0.16 + 0.25 + c1), 1e-6));
    QVERIFY(near(psnrLuma(grey(0.25), grey(0.75)), 10 * std::log10(1 / 0.25), 1e-5));
    // SSIM of a shifted textured frame: luminance term only, below 1.
    const double shifted = ssimLuma(a, b);
    QVERIFY(shifted < 1.0 && shifted > 0.8);
    // A frame smaller than the window still works (window shrinks to fit).
    QCOMPARE(ssimLuma(grey(0.3, 5, 7), grey(0.3, 5, 7)), 1.0);
  }

  void deltaEOfKnownColours() {
    const LabColour white = meanLab(solid(1, 1, 1)), black = meanLab(solid(0, 0, 0)), red = meanLab(solid(1, 0, 0));
    QVERIFY(near(white.l, 100.0, 1e-3) && near(white.a, 0.0, 1e-3) && near(white.b, 0.0, 1e-3));
    QVERIFY(near(black.l, 0.0, 1e-9));
    // sRGB red (D65): L* 53.2408, a* 80.0925, b* 67.2032.
    QVERIFY2(near(red.l, 53.2408, 2e-3) && near(red.a, 80.0925, 2e-3) && near(red.b, 67.2032, 2e-3),
             qPrintable(QString("%1 %2 %3").arg(red.l).arg(red.a).arg(red.b)));
    QVERIFY(near(deltaE76(white, black), 100.0, 1e-3));
    QVERIFY(near(deltaE76(red, white), std::sqrt(46.7592 * 46.7592 + 80.0925 * 80.0925 + 67.2032 * 67.2032), 5e-3));
    // Mean over pixels: half red, half black.
    at::Tensor half = solid(0, 0, 0);
    half.narrow(2, 0, 8).copy_(solid(1, 0, 0).narrow(2, 0, 8));
    const LabColour mixed = meanLab(half);
    QVERIFY(near(mixed.l, red.l / 2, 1e-6) && near(mixed.a, red.a / 2, 1e-6));
  }

  void madRatioOfStaticAndSteadyClips() {
    // A static clip continued across the cut: nothing changes anywhere → 1 (seamless).
    const at::Tensor still = greyClip({0.5, 0.5, 0.5, 0.5});
    ShotStats a = computeShotStats("a", constantFrames({0, 0, 0}), 0, still);
    ShotStats b = computeShotStats("b", constantFrames({0, 0, 0}), 0, still);
    CutInputs in;
    in.previous = &a;
    in.next = &b;
    in.previousLastFrame = still.select(1, 3);
    in.nextFrames = still;
    CutMetrics m = measureCut(in);
    QCOMPARE(*m.madRatio, 1.0);
    QVERIFY(std::isinf(*m.psnrCut));
    QCOMPARE(*m.ssimCut, 1.0);
    QVERIFY(std::isinf(*m.psnrWithinMedian));
    // Static shots with a jump at the cut → +inf.
    in.nextFrames = greyClip({0.6, 0.6, 0.6});
    b = computeShotStats("b", constantFrames({0, 0, 0}), 0, in.nextFrames);
    QVERIFY(std::isinf(*measureCut(in).madRatio));

    // A steady brightness ramp (0.01 per frame) with a 0.03 step at the cut → 3.
    std::vector<double> first, second;
    for (int i = 0; i < 9; ++i) first.push_back(0.2 + 0.01 * i);
    for (int i = 0; i < 9; ++i) second.push_back(0.2 + 0.01 * (8 + 3 + i));
    const at::Tensor clipA = greyClip(first), clipB = greyClip(second);
    a = computeShotStats("a", constantFrames({0, 0, 0}), 0, clipA);
    b = computeShotStats("b", constantFrames({0, 0, 0}), 0, clipB);
    QCOMPARE(a.headPairs.size(), std::size_t(8));
    QCOMPARE(a.tailPairs.size(), std::size_t(8));
    in.previousLastFrame = clipA.select(1, 8);
    in.nextFrames = clipB;
    m = measureCut(in);
    QVERIFY2(near(*m.madRatio, 3.0, 1e-9), qPrintable(QString::number(*m.madRatio, 'g', 17)));
    QVERIFY(near(*m.psnrCut, 10 * std::log10(1 / (0.03 * 0.03)), 1e-6));
    QVERIFY(near(*m.psnrWithinMedian, 40.0, 1e-6));
    QVERIFY(near(*m.deltaEPrev, deltaE76(meanLab(clipB.select(1, 0)), meanLab(clipA.select(1, 8))), 1e-12));
  }

  void latentStepRatioAndChannelDeltas() {
    // Shot N: frames 0, 1, 2, 3 → steps from frame 1: 1, 1. Shot N+1 holds frame 0 (= 3), then 4.5, 5.5, 6.5.
    const at::Tensor previous = constantFrames({0, 1, 2, 3});
    const at::Tensor next = constantFrames({3, 4.5, 5.5, 6.5});
    const at::Tensor frames = greyClip({0.5, 0.5});
    const ShotStats a = computeShotStats("a", previous, 0, frames);
    const ShotStats b = computeShotStats("b", next, 1, frames);
    QCOMPARE(a.latentSteps, (std::vector<double>{1.0, 1.0}));
    QCOMPARE(b.latentSteps, (std::vector<double>{1.0, 1.0}));
    QCOMPARE(b.latentHead.mean, (std::vector<double>{4.5, 4.5}));
    QCOMPARE(b.latent.mean, (std::vector<double>{5.5, 5.5}));
    CutInputs in;
    in.previous = &a;
    in.next = &b;
    in.first = &a;
    in.previousTail = previous.narrow(1, 3, 1);
    in.nextLatent = next;
    const CutMetrics m = measureCut(in);
    QVERIFY(near(*m.latentStepRatio, 1.5, 1e-12));
    QCOMPARE(m.channelMeanDeltaPrev, (std::vector<double>{1.5, 1.5}));
    QCOMPARE(m.meanAbsChannelMeanDeltaPrev, 1.5);
    QCOMPARE(m.channelMeanDeltaFirst, (std::vector<double>{5.5 - 1.5, 5.5 - 1.5}));
    // Shot 1's generated frames 0..3 have std sqrt(1.25); N+1's 4.5..6.5 have std sqrt(2/3).
    QVERIFY(near(m.channelLogStdDeltaFirst[0], std::log(std::sqrt(2.0 / 3.0)) - std::log(std::sqrt(1.25)), 1e-12));
    QVERIFY(!m.psnrCut && !m.madRatio && !m.handoffMse && !m.roundtripMse);
  }

  void adainMovesStatsExactly() {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(5);
    const at::Tensor latent = at::randn({4, 3, 5, 5}, g) * 3 + 2;
    const ChannelStats reference{{0.5, -1.0, 2.0, 0.0}, {1.0, 0.5, 2.0, 0.25}};
    const at::Tensor anchored = anchorChannelStats(latent, reference, 1);
    QVERIFY(at::equal(anchored.narrow(1, 0, 1), latent.narrow(1, 0, 1)));  // held frame kept
    const ChannelStats after = latentChannelStats(anchored.narrow(1, 1, 2));
    for (std::size_t c = 0; c < 4; ++c) {
      QVERIFY(near(after.mean[c], reference.mean[c], 1e-5));
      QVERIFY(near(after.std[c], reference.std[c], 1e-5));
    }
    const ChannelStats whole = latentChannelStats(anchorChannelStats(latent, reference));
    QVERIFY(near(whole.std[3], 0.25, 1e-6));
    QVERIFY(errorOf([&] { anchorChannelStats(latent, ChannelStats{{0}, {1}}); }).contains("channels"));
  }

  void channelStatsByHand() {
    const at::Tensor latent = at::tensor({1.0, 3.0, 5.0, 7.0}, at::kDouble).view({1, 2, 1, 2});
    const ChannelStats s = latentChannelStats(latent);
    QCOMPARE(s.mean, std::vector<double>{4.0});
    QCOMPARE(s.std, std::vector<double>{std::sqrt(5.0)});
  }

  void resampleShapesAndValues() {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(6);
    const at::Tensor latent = at::randn({16, 3, 4, 4}, g);
    QCOMPARE(resampleLatent(latent, 4, 4).data_ptr(), latent.data_ptr());  // no change, no copy
    const at::Tensor up = resampleLatent(latent, 6, 8);
    QCOMPARE(up.sizes(), at::IntArrayRef({16, 3, 6, 8}));
    // Frame by frame: frame 1 alone gives the same result.
    QVERIFY(at::allclose(resampleLatent(latent.narrow(1, 1, 1), 6, 8), up.narrow(1, 1, 1)));
    // A constant stays constant (bicubic weights sum to 1).
    const at::Tensor flat = resampleLatent(at::full({2, 2, 4, 4}, 1.5), 7, 3);
    QVERIFY((flat - 1.5).abs().max().item<double>() < 1e-5);
    // Doubling then taking every other sample with align_corners=false is close, not exact; a channel
    // that varies only along x keeps varying only along x.
    const at::Tensor ramp = at::arange(4, at::kFloat).view({1, 1, 1, 4}).expand({1, 1, 4, 4}).contiguous();
    const at::Tensor wide = resampleLatent(ramp, 8, 8);
    QVERIFY(at::allclose(wide.select(2, 0), wide.select(2, 7)));
    QVERIFY(wide[0][0][0][7].item<float>() > wide[0][0][0][0].item<float>());
    QVERIFY(errorOf([&] { resampleLatent(at::zeros({3, 4, 4}), 2, 2); }).contains("[C, F, h, w]"));
  }

  void shotStatsJsonRoundTrip() {
    ShotStats s;
    s.shotId = "cross";
    s.heldLatentFrames = 2;
    s.latent = {{0.25, -1.5}, {1.0, 2.0}};
    s.latentHead = {{0.5, 0.5}, {1.0, 1.0}};
    s.latentTail = {{-0.125, 3.0}, {0.75, 1.25}};
    s.latentSteps = {0.1, 0.2};
    s.firstFrameLab = {50.0, 1.5, -2.0};
    s.lastFrameLab = {51.0, 1.0, -2.5};
    s.headPairs = {{0.01, std::numeric_limits<double>::infinity(), 1.0}, {0.02, 33.5, 0.9}};
    s.tailPairs = {{0.03, 30.25, 0.8}};
    const ShotStats back = shotStatsFromJson(shotStatsToJson(s), "stats.json");
    QVERIFY(back == s);
    QVERIFY(
        errorOf([] { shotStatsFromJson("{\"shot_id\": \"a\"}", "x.json"); }).contains("x.json: held_latent_frames"));
    QVERIFY(errorOf([] { shotStatsFromJson("[1", "x.json"); }).contains("x.json"));
  }
};

SHOTCHAIN_TEST(TestContinuityMeasures, Appless)
#include "test_continuity_measures.moc"
