// The image-to-video condition beside the layouts it must equal: the first–last-frame mask as ComfyUI's
// WanFirstLastFrameToVideo builds it (Comfy's 0 = given, inverted by the model wrapper), Stable Video
// Infinity's anchor + motion latents + zeros, and how close a frame lands on its keyframe.
#include <QTest>

#include <cmath>

#include <ATen/ATen.h>

#include "continuity/frame_measures.h"
#include "continuity/image_condition.h"
#include "continuity/keyframe_landing.h"
#include "continuity/keyframe_measures.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::continuity;

namespace {

// nodes_wan.py's layout, written out: ones over 4·T' entries, zero (given) for the first image's
// frames + 3 and the last image's frames at the end, viewed [T', 4] and transposed; then 1 − mask.
at::Tensor comfyMask(std::int64_t frames, std::int64_t h, std::int64_t w, bool start, bool end) {
  const std::int64_t latentFrames = (frames - 1) / 4 + 1;
  at::Tensor mask = at::ones({1, 1, latentFrames * 4, h, w});
  if (start) mask.narrow(2, 0, 1 + 3).zero_();
  if (end) mask.narrow(2, latentFrames * 4 - 1, 1).zero_();
  mask = mask.view({1, latentFrames, 4, h, w}).transpose(1, 2);
  return (1.0 - mask)[0].contiguous();
}

}  // namespace

class TestImageCondition : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void firstLastMaskIsComfyUisForAnyLength_data() {
    QTest::addColumn<int>("frames");
    QTest::addColumn<bool>("start");
    QTest::addColumn<bool>("end");
    for (int frames : {5, 9, 17, 81})
      for (auto [start, end] : {std::pair{true, false}, std::pair{true, true}, std::pair{false, true}})
        QTest::addRow("%d frames%s%s", frames, start ? " start" : "", end ? " end" : "") << frames << start << end;
  }

  void firstLastMaskIsComfyUisForAnyLength() {
    QFETCH(int, frames);
    QFETCH(bool, start);
    QFETCH(bool, end);
    const at::Tensor ours = imageToVideoMask(frames, 3, 2, 4, start, end);
    QVERIFY(at::equal(ours, comfyMask(frames, 3, 2, start, end)));
    const std::int64_t last = (frames - 1) / 4;
    if (end) {  // the last pixel frame is the last channel of the last latent frame, and only that one
      QCOMPARE(ours[3][last].min().item<float>(), 1.0f);
      QCOMPARE(ours.narrow(0, 0, 3).select(1, last).max().item<float>(), 0.0f);
    }
  }

  void sviHoldsTheAnchorAndTheHandedLatentsAsTheyAre() {
    const at::Tensor anchor = at::randn({16, 1, 4, 6});
    const at::Tensor previous = at::randn({16, 5, 4, 6});
    const at::Tensor motion = previous.narrow(1, 3, 2);  // a view of the previous clip, as the ring buffer hands it
    const at::Tensor y = sviCondition(anchor, motion, 6, 4);
    QCOMPARE(y.sizes().vec(), (std::vector<std::int64_t>{20, 6, 4, 6}));
    QVERIFY(at::equal(y.narrow(0, 0, 4), imageToVideoMask(21, 4, 6)));  // the plain first-frame mask
    const at::Tensor latent = y.narrow(0, 4, 16);
    QVERIFY(at::equal(latent.narrow(1, 0, 1), anchor));
    QVERIFY(at::equal(latent.narrow(1, 1, 2), motion));                // bit for bit
    QCOMPARE(latent.narrow(1, 3, 3).abs().max().item<float>(), 0.0f);  // zero latents, not an encoded grey
    QVERIFY(at::equal(sviCondition(anchor, {}, 6, 4).narrow(0, 4, 16).narrow(1, 1, 5), at::zeros({16, 5, 4, 6})));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sviCondition(anchor, previous, 5, 4));
  }

  void aFrameLandsOnItsKeyframeOrSaysItMissed() {
    const at::Tensor key = at::rand({3, 24, 24}, at::kDouble) * 2 - 1;
    const KeyframeLanding same = measureLanding("end", key, key);
    QVERIFY(std::isinf(same.psnr));
    QCOMPARE(same.ssim, 1.0);
    QCOMPARE(same.deltaE, 0.0);
    QVERIFY(!same.missed);
    const KeyframeLanding near = measureLanding("end", (key + 0.01).clamp(-1, 1), key);
    QVERIFY(!near.missed && near.psnr > 30 && near.deltaE < 2);
    const KeyframeLanding far = measureLanding("start", -key, key);
    QVERIFY(far.missed);
    QVERIFY(far.deltaE > kLandingDeltaE);
    // The per-pixel ΔE of two solid frames is the ΔE of their colours.
    const at::Tensor red = at::stack({at::ones({8, 8}), -at::ones({8, 8}), -at::ones({8, 8})});
    const at::Tensor grey = at::zeros({3, 8, 8});
    QVERIFY(std::abs(meanDeltaE76(red, grey) - deltaE76(meanLab(red), meanLab(grey))) < 1e-9);
    QVERIFY(QString::fromStdString(landingWarning(2, "s3", far)).startsWith("shot 3 (s3) misses its start keyframe"));
  }
};

SHOTCHAIN_TEST(TestImageCondition, Appless)
#include "test_image_condition.moc"
