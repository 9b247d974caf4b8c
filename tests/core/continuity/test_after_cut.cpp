// The figures on the frames after a cut (flash, colour and spread drift, structure) and their
// verdicts, on clips whose answers are worked out by hand.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <ATen/ATen.h>

#include "continuity/after_cut_measures.h"
#include "continuity/cut_measures.h"
#include "continuity/cut_verdict.h"
#include "continuity/frame_measures.h"
#include "continuity/shot_stats.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::continuity;

namespace {

// A frame [3, H, W] in [−1, 1] whose RGB (in [0, 1]) is (r, g, b) everywhere.
at::Tensor solid(double r, double g, double b, std::int64_t size = 16) {
  at::Tensor f = at::empty({3, size, size}, at::kDouble);
  f[0].fill_(2 * r - 1);
  f[1].fill_(2 * g - 1);
  f[2].fill_(2 * b - 1);
  return f;
}

// Left half one colour, right half another.
at::Tensor halves(const at::Tensor& left, const at::Tensor& right) {
  at::Tensor f = right.clone();
  f.narrow(2, 0, f.size(2) / 2).copy_(left.narrow(2, 0, f.size(2) / 2));
  return f;
}

at::Tensor clip(const std::vector<at::Tensor>& frames) {
  std::vector<at::Tensor> columns;
  for (const at::Tensor& f : frames) columns.push_back(f.unsqueeze(1));
  return at::cat(columns, 1);
}

at::Tensor repeated(const at::Tensor& frame, int count) { return clip(std::vector<at::Tensor>(count, frame)); }

// Grey frames with luma values start, start + step, …
std::vector<at::Tensor> greyRamp(double start, double step, int count) {
  std::vector<at::Tensor> frames;
  for (int i = 0; i < count; ++i) frames.push_back(solid(start + step * i, start + step * i, start + step * i));
  return frames;
}

at::Tensor latent() { return at::zeros({2, 3, 2, 2}, at::kDouble); }

// measureCut on two clips, the way the renderer calls it after a decode.
CutMetrics cutBetween(const at::Tensor& before, const at::Tensor& after, const std::string& mode = "latent") {
  const ShotStats a = computeShotStats("a", latent(), 0, before);
  const ShotStats b = computeShotStats("b", latent(), 0, after);
  CutInputs in;
  in.previous = &a;
  in.next = &b;
  in.previousLastFrame = before.select(1, before.size(1) - 1);
  in.nextFrames = after;
  CutMetrics m = measureCut(in);
  m.mode = mode;
  return m;
}

bool near(double a, double b, double tol) { return std::abs(a - b) <= tol; }
QString text(double v) { return QString::number(v, 'g', 12); }

}  // namespace

class TestAfterCut : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void constantClipGivesFlashOneAndNoDrift() {
    const at::Tensor still = repeated(solid(0.5, 0.4, 0.3), 17);
    const CutMetrics m = cutBetween(still, still);
    QCOMPARE(m.afterCutFrames, 8);
    QCOMPARE(*m.flash, 1.0);  // nothing changes anywhere: both sides count one 8-bit level
    QCOMPARE(*m.colourDrift, 0.0);
    QCOMPARE(*m.spreadDrift, 0.0);
    QCOMPARE(*m.structure, 1.0);
    const CutVerdict v = judgeCut(m);
    QCOMPARE(v.warnings, 0);
    QCOMPARE(QString::fromStdString(v.summary), QString("fine"));
  }

  void insertedWhiteFrameIsAFlash() {
    // A grey ramp of 0.01 per frame runs through the cut; frame 3 after the cut is white.
    const at::Tensor before = clip(greyRamp(0.20, 0.01, 9));    // 0.20 … 0.28
    std::vector<at::Tensor> frames = greyRamp(0.29, 0.01, 17);  // 0.29 … 0.45
    frames[3] = solid(1, 1, 1);
    const CutMetrics m = cutBetween(before, clip(frames));
    // Usual change: 0.01 (the last 8 pairs before, the 8 pairs after the first 8 frames after). The
    // largest change after the cut: 0.31 → 1.0 = 0.69. Flash 0.69 / 0.01 = 69.
    QVERIFY2(near(*m.flash, 69.0, 1e-6), qPrintable(text(*m.flash)));
    // White is L* 100, a* = b* = 0; grey 0.28 is L* 116·Y^(1/3) − 16 with Y = ((0.28 + 0.055) / 1.055)^2.4
    // = 0.06374, so L* 30.333 and the drift 69.667.
    QVERIFY2(near(*m.colourDrift, 69.667, 2e-3), qPrintable(text(*m.colourDrift)));
    QCOMPARE(*m.spreadDrift, 0.0);  // solid frames have no spread
    // Solid frames: SSIM = (2xy + C1) / (x² + y² + C1); the worst pair is (0.31, 1.0), the usual pairs
    // are 0.01 apart.
    const auto ssim = [](double x, double y) { return (2 * x * y + 1e-4) / (x * x + y * y + 1e-4); };
    std::vector<double> usual;
    for (int i = 0; i < 8; ++i) usual.push_back(ssim(0.21 + 0.01 * i, 0.20 + 0.01 * i));
    for (int i = 8; i < 16; ++i) usual.push_back(ssim(0.29 + 0.01 * i, 0.30 + 0.01 * i));
    std::sort(usual.begin(), usual.end());
    const double median = (usual[7] + usual[8]) / 2;
    QVERIFY2(near(*m.structure, ssim(0.31, 1.0) / median, 1e-4), qPrintable(text(*m.structure)));
    const CutVerdict v = judgeCut(m);
    QCOMPARE(v.figures[0].state, FigureState::Warning);
    QCOMPARE(v.figures[1].state, FigureState::Warning);
    QCOMPARE(v.figures[3].state, FigureState::Warning);
    QVERIFY2(QString::fromStdString(v.summary).startsWith("warning: flash 69.0×"),
             qPrintable(QString::fromStdString(v.summary)));
    QVERIFY(QString::fromStdString(v.figures[0].words).contains("the first 8 frames"));
  }

  void whiteFrameLaterThanEightFramesIsNotLookedAt() {
    const at::Tensor before = clip(greyRamp(0.20, 0.01, 9));
    std::vector<at::Tensor> frames = greyRamp(0.29, 0.01, 17);
    frames[12] = solid(1, 1, 1);  // in the baseline, where the median ignores it
    const CutMetrics m = cutBetween(before, clip(frames));
    QVERIFY2(near(*m.flash, 1.0, 1e-6), qPrintable(text(*m.flash)));
  }

  void hueRotatedContinuationDriftsByHand() {
    // Before: left half sRGB red, right half green. After: the same picture hue-rotated by 120°
    // (R → G → B → R): left green, right blue. sRGB primaries in L*a*b* (D65):
    //   red (53.2408, 80.0925, 67.2032), green (87.7347, −86.1827, 83.1793), blue (32.2970, 79.1875, −107.8602).
    // Mean before (R + G)/2 = (70.48775, −3.04510, 75.19125), after (G + B)/2 = (60.01585, −3.49760, −12.34045):
    //   ΔE = √(10.4719² + 0.4525² + 87.5317²) = 88.157.
    // Spread (std over two equal halves = |difference| / 2): before (17.24695, 83.13760, 7.98805),
    //   after (27.71885, 82.68510, 95.51975): ΔE = √(10.4719² + 0.4525² + 87.5317²) = 88.157 as well.
    const at::Tensor red = solid(1, 0, 0), green = solid(0, 1, 0), blue = solid(0, 0, 1);
    const at::Tensor before = repeated(halves(red, green), 9);
    const at::Tensor after = repeated(halves(green, blue), 9);
    const CutMetrics m = cutBetween(before, after);
    QVERIFY2(near(*m.colourDrift, 88.157, 5e-3), qPrintable(text(*m.colourDrift)));
    QVERIFY2(near(*m.spreadDrift, 88.157, 5e-3), qPrintable(text(*m.spreadDrift)));
    QCOMPARE(*m.flash, 1.0);  // a rotated picture that then holds still is no flash
    QCOMPARE(judgeCut(m).figures[1].state, FigureState::Warning);
    // The same change into a `none` shot is a new scene: reported, not warned about.
    const CutMetrics hard = cutBetween(before, after, "none");
    QCOMPARE(judgeCut(hard).figures[1].state, FigureState::Expected);
    QCOMPARE(judgeCut(hard).warnings, 0);

    // Half the picture rotated (only the left half turns green): mean ΔE between (R + G)/2 and G
    // = |R − G| / 2 = √(17.24695² + 83.1376² + 7.98805²) = 85.283.
    const CutMetrics partial = cutBetween(repeated(halves(red, green), 9), repeated(green, 9));
    QVERIFY2(near(*partial.colourDrift, 85.283, 5e-3), qPrintable(text(*partial.colourDrift)));
  }

  void driftIsTheWorstOfTheFirstEightFrames() {
    // Grey 0.5 before; after, frame 5 alone is red; frame 9 (not looked at) blue.
    std::vector<at::Tensor> frames(12, solid(0.5, 0.5, 0.5));
    frames[5] = solid(1, 0, 0);
    frames[9] = solid(0, 0, 1);
    const CutMetrics m = cutBetween(repeated(solid(0.5, 0.5, 0.5), 9), clip(frames));
    const double expected = deltaE76(meanLab(solid(1, 0, 0)), meanLab(solid(0.5, 0.5, 0.5)));
    QVERIFY2(near(*m.colourDrift, expected, 1e-9), qPrintable(text(*m.colourDrift)));
  }

  void shortShotsAndOldRecords() {
    const at::Tensor before = repeated(solid(0.5, 0.5, 0.5), 5);
    // One frame after the cut: the drifts only.
    CutMetrics m = cutBetween(before, repeated(solid(0.6, 0.5, 0.5), 1));
    QCOMPARE(m.afterCutFrames, 1);
    QVERIFY(m.colourDrift && *m.colourDrift > 0);
    QVERIFY(!m.flash && !m.structure);
    // A shot.json written before these figures: no tail changes or spread → those figures are left out.
    ShotStats old = computeShotStats("a", latent(), 0, before);
    old.tailChanges.reset();
    old.lastFrameLabSpread.reset();
    const ShotStats back = shotStatsFromJson(shotStatsToJson(old), "old.json");
    QVERIFY(!back.tailChanges && !back.lastFrameLabSpread);
    CutMetrics fromOld;
    measureAfterCut(back, repeated(solid(0.5, 0.5, 0.5), 9), kWithinShotWindow, fromOld);
    QVERIFY(!fromOld.flash && !fromOld.spreadDrift);
    QCOMPARE(*fromOld.colourDrift, 0.0);
    QCOMPARE(*fromOld.structure, 1.0);
    QCOMPARE(QString::fromStdString(judgeCut(fromOld).summary), QString("fine"));
    // And the new fields survive a round trip.
    const ShotStats full = computeShotStats("a", latent(), 0, repeated(halves(solid(1, 0, 0), solid(0, 1, 0)), 5));
    QVERIFY(full.tailChanges && full.tailChanges->size() == 4 && full.lastFrameLabSpread);
    QVERIFY(shotStatsFromJson(shotStatsToJson(full), "new.json") == full);
  }

  void verdictThresholds() {
    CutMetrics m;
    m.mode = "latent";
    m.afterCutFrames = 8;
    QCOMPARE(QString::fromStdString(judgeCut(m).summary), QString("not measured"));
    m.flash = CutThresholds::flash;
    m.colourDrift = CutThresholds::colourDrift;
    m.spreadDrift = 3.0;
    m.structure = CutThresholds::structure;
    QCOMPARE(judgeCut(m).warnings, 0);  // at the threshold is still fine
    m.flash = 2.5;
    m.colourDrift = 12.34;
    m.structure = 0.5;
    const CutVerdict v = judgeCut(m);
    QCOMPARE(v.warnings, 3);
    QCOMPARE(QString::fromStdString(v.summary),
             QString::fromUtf8("warning: flash 2.5×, colour drift ΔE 12.3, structure 0.50×"));
    m.flash = std::numeric_limits<double>::infinity();
    QVERIFY(QString::fromStdString(judgeCut(m).figures[0].brief).contains("∞"));
  }
};

SHOTCHAIN_TEST(TestAfterCut, Appless)
#include "test_after_cut.moc"
