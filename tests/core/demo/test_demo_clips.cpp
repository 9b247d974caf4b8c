#include <QTest>

#include <cmath>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "demo/demo_prompts.h"
#include "demo/frame_analysis.h"
#include "demo/procedural_clip.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::demo;

class TestDemoClips : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void generatorIsDeterministic() {
    for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{7}, kHeldOutSeedStart + 3}) {
      const ClipParams a = randomClipParams(seed), b = randomClipParams(seed);
      QCOMPARE(clipPrompt(a), clipPrompt(b));
      QVERIFY(at::equal(renderClip(a), renderClip(b)));
    }
    QVERIFY(!at::equal(renderClip(randomClipParams(1)), renderClip(randomClipParams(2))));
  }

  void clipShapeAndRange() {
    const at::Tensor clip = renderClip(randomClipParams(5));
    QCOMPARE(clip.sizes().vec(), (std::vector<std::int64_t>{3, 17, 64, 64}));
    QVERIFY(clip.min().item<float>() >= -1.0f && clip.max().item<float>() <= 1.0f);
  }

  void objectMaskCoversTheObjectOnly() {
    ClipParams p;
    p.colour = 1;      // green
    p.background = 1;  // gray: every channel differs from the object
    p.shape = Shape::Bar;
    p.direction = Direction::Still;
    p.speed = 0;
    p.radius = 10;  // a bar of 2 · radius = 20 by 2 · radius / 3 ≈ 6.7 pixels
    p.x0 = 20;
    p.y0 = 40;
    const at::Tensor clip = renderClip(p);
    const at::Tensor mask = objectMask(clip, p);
    QCOMPARE(mask.sizes().vec(), (std::vector<std::int64_t>{1, 17, 64, 64}));
    const double area = mask.select(1, 0).sum().item<double>();
    QVERIFY2(area >= 20 * 6 && area <= 22 * 9, std::to_string(area).c_str());  // the bar and its anti-aliased edge
    QCOMPARE(mask.select(1, 16)[0][40][20].item<float>(), 1.0f);
    QCOMPARE(mask.select(1, 16)[0][10][50].item<float>(), 0.0f);
    p.background = 0;  // the same clip against black: the gray background counts as object
    QVERIFY(objectMask(clip, p).mean().item<double>() > 0.9);
  }

  void promptMatchesParameters() {
    ClipParams p;
    p.colour = 0;
    p.shape = Shape::Circle;
    p.direction = Direction::Right;
    p.background = 0;
    QCOMPARE(clipPrompt(p), std::string("a red circle moving right on a black background"));
    p.colour = 5;
    p.shape = Shape::Triangle;
    p.direction = Direction::Still;
    p.background = 1;
    QCOMPARE(clipPrompt(p), std::string("a magenta triangle staying still on a gray background"));
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      const ClipParams r = randomClipParams(seed);
      const std::string prompt = clipPrompt(r);
      QVERIFY(prompt.find(demoColours()[static_cast<std::size_t>(r.colour)].name) != std::string::npos);
      QVERIFY(prompt.find(shapeName(r.shape)) != std::string::npos);
      QVERIFY(prompt.find(r.direction == Direction::Still ? "still" : directionName(r.direction)) != std::string::npos);
      QCOMPARE(r.speed == 0.0f, r.direction == Direction::Still);
    }
    QCOMPARE(allDemoPrompts().size(), std::size_t{6 * 3 * 5 * 2});
  }

  // The second clip of a training chain picks the object up where the first left it: same colour, shape,
  // size and background, another direction, and a path that stays in frame.
  void continuationStartsWhereTheFirstClipEnds() {
    int turned = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      const ClipParams first = randomClipParams(seed);
      const ClipParams next = continuationClipParams(first, seed);
      QCOMPARE(next.colour, first.colour);
      QCOMPARE(next.shape, first.shape);
      QCOMPARE(next.background, first.background);
      QCOMPARE(next.radius, first.radius);
      QCOMPARE(clipCentre(next, 0), clipCentre(first, first.frames - 1));
      QVERIFY(next.direction != first.direction || next.direction == Direction::Still);
      QCOMPARE(next.speed == 0.0f, next.direction == Direction::Still);
      turned += next.direction != Direction::Still;
      const auto end = clipCentre(next, next.frames - 1);
      for (float v : end) QVERIFY2(v >= next.radius - 0.5f && v <= 64 - next.radius + 0.5f, clipPrompt(next).c_str());
    }
    qInfo("%d of 200 continuations move", turned);
    QVERIFY(turned >= 120);
    const ClipParams first = randomClipParams(3), next = continuationClipParams(first, 3);
    QVERIFY(continuationClipParams(first, 3).direction == next.direction);  // deterministic
    const at::Tensor chain = renderChain(first, next);
    QCOMPARE(chain.sizes().vec(), (std::vector<std::int64_t>{3, 33, 64, 64}));
    QVERIFY(at::equal(chain.narrow(1, 0, 17), renderClip(first)));
    QVERIFY(at::equal(chain.narrow(1, 16, 17), renderClip(next)));
  }

  void motionFollowsDirection() {
    ClipParams p;
    p.direction = Direction::Up;
    p.speed = 2;
    const auto c0 = clipCentre(p, 0), c16 = clipCentre(p, 16);
    QCOMPARE(c16[0], c0[0]);
    QCOMPARE(c16[1], c0[1] - 32.0f);
  }

  // The detector reads back the generator's ground truth.
  void detectorFindsGroundTruth() {
    int colour = 0, shape = 0, direction = 0, single = 0;
    const int n = 60;
    for (int i = 0; i < n; ++i) {
      const ClipParams p = randomClipParams(kHeldOutSeedStart + static_cast<std::uint64_t>(i));
      const ClipObservation o = analyseClip(renderClip(p));
      QCOMPARE(o.foundFrames, 17);
      colour += o.colour == p.colour;
      shape += o.shape == p.shape;
      direction += o.direction == p.direction;
      single += o.singleObjectFrames == 17;
      auto truth = clipCentre(p, 8);
      if (p.shape == Shape::Triangle) truth[1] += p.radius / 3;  // the area centroid sits a third below the box centre
      if (!o.frames[8].touchesBorder)
        QVERIFY2(std::hypot(o.frames[8].cx - truth[0], o.frames[8].cy - truth[1]) < 1.5f, "centroid");
    }
    qInfo("detector on ground truth: colour %d/%d, shape %d/%d, direction %d/%d", colour, n, shape, n, direction, n);
    QCOMPARE(colour, n);
    QVERIFY(shape >= n * 9 / 10);
    QCOMPARE(direction, n);
    QCOMPARE(single, n);
  }

  void detectorSeesNothingOnPlainOrNoise() {
    QVERIFY(!analyseFrame(at::full({3, 64, 64}, -1.0f)).found);
    const at::Tensor noise = at::rand({3, 64, 64}, at::detail::createCPUGenerator(3)) * 2 - 1;
    QVERIFY(!analyseFrame(noise).found);
  }
};

SHOTCHAIN_TEST(TestDemoClips, Core)
#include "test_demo_clips.moc"
