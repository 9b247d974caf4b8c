// Continuity on a model with per-frame timesteps, through the real renderer and loaders on a tiny
// random SkyReels-V2 DF style model written by the test: the handed latents are a clean prefix that
// leaves sampling bit-identical, with zero bytes copied; on a Wan 2.1 T2V model the plan and the
// report say that continuation is approximate.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>

#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "sampling/sampler.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

struct Collecting : render::RenderObserver {
  std::vector<continuity::CutMetrics> cuts;
  std::vector<render::RenderWarning> warnings;
  void cutMeasured(const continuity::CutMetrics& c) override { cuts.push_back(c); }
  void warning(const render::RenderWarning& w) override { warnings.push_back(w); }
};

Shot makeShot(const std::string& id, ContinuityMode mode, std::uint64_t seed, std::optional<int> prefix = {}) {
  Shot shot;
  shot.id = id;
  shot.prompt = "a red circle moving right on a black background";
  shot.frames = 13;  // 4 latent frames
  shot.width = 32;
  shot.height = 32;
  shot.seed = seed;
  shot.continuity.mode = mode;
  shot.continuity.prefixFrames = prefix;
  return shot;
}

}  // namespace

class DiffusionForcingRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  Sequence chain(const TinyModelSet& models) const {
    Sequence s;
    s.settings.model = models.modelSet();
    s.settings.sampler.steps = 3;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {makeShot("a", ContinuityMode::None, 1), makeShot("b", ContinuityMode::Latent, 2),
               makeShot("c", ContinuityMode::Latent, 3, 2)};
    return s;
  }

  render::RenderOptions options(const std::string& out) const {
    render::RenderOptions o;
    o.outputDirectory = root() / out;
    o.sequenceDirectory = root();
    o.framesOnDisk = false;
    return o;
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU);
    QTEST_ASSERT(t.has_value());
    return t->latent;
  }

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void handedLatentsAreACleanPrefix() {
    const TinyModelSet models = writeTinyModelSet(root() / "df", 21, true);
    const Sequence sequence = chain(models);
    render::Renderer renderer;
    Collecting observer;
    const render::RenderSummary summary = renderer.render(sequence, options("df.render"), observer);
    QVERIFY(summary.finished.completed);
    QVERIFY(summary.plan.notes.empty());
    for (const render::RenderWarning& w : observer.warnings) QVERIFY2(w.kind != "continuity", w.message.c_str());

    const at::Tensor a = tail("df.render", 0, "a"), b = tail("df.render", 1, "b"), c = tail("df.render", 2, "c");
    QCOMPARE(b.size(1), std::int64_t{4});      // prefix_frames 1: the shot's own 4 latent frames
    QCOMPARE(c.size(1), std::int64_t{4 + 1});  // prefix_frames 2: one more, so it still writes 13 frames
    QVERIFY(at::equal(b.narrow(1, 0, 1), a.narrow(1, 3, 1)));  // bit-identical after sampling
    QVERIFY(at::equal(c.narrow(1, 0, 2), b.narrow(1, 2, 2)));
    // The frames after the prefix were generated: neither the prefix repeated nor the seed's noise.
    const at::Tensor noise = sampling::seededNoise(b.sizes().vec(), 2);
    QVERIFY(!at::equal(b.narrow(1, 1, 3), noise.narrow(1, 1, 3)));
    QVERIFY((b.narrow(1, 1, 1) - b.narrow(1, 0, 1)).abs().max().item<double>() > 1e-3);
    QCOMPARE(static_cast<int>(observer.cuts.size()), 2);
    for (const continuity::CutMetrics& cut : observer.cuts) {
      QCOMPARE(cut.handoffBytesCopied, std::uint64_t{0});
      QCOMPARE(*cut.handoffMse, 0.0);
    }
    QCOMPARE(summary.shots[1].framesWritten, 13);
    QCOMPARE(summary.shots[2].framesWritten, 13);
  }

  void aOneTimestepModelSaysContinuationIsApproximate() {
    const TinyModelSet models = writeTinyModelSet(root() / "wan", 21, false);
    const Sequence sequence = chain(models);
    render::Renderer renderer;
    const memory::MemoryPlan plan = renderer.plan(sequence, options("wan.render"));
    QCOMPARE(plan.notes.size(), std::size_t{1});
    QVERIFY2(plan.notes[0].find("approximate") != std::string::npos, plan.notes[0].c_str());
    Collecting observer;
    const render::RenderSummary summary = renderer.render(sequence, options("wan.render"), observer);
    QVERIFY(summary.finished.completed);
    bool said = false;
    for (const render::RenderWarning& w : observer.warnings) said = said || w.kind == "continuity";
    QVERIFY(said);
    const std::string report = readFile(root() / "wan.render" / "report.json");
    QVERIFY(report.find("continuation is approximate") != std::string::npos);
    // The re-noised slot is restored exactly afterwards, as before.
    QVERIFY(at::equal(tail("wan.render", 1, "b").narrow(1, 0, 1), tail("wan.render", 0, "a").narrow(1, 3, 1)));
  }
};

SHOTCHAIN_TEST(DiffusionForcingRenderTest, Core)
#include "test_diffusion_forcing_render.moc"
