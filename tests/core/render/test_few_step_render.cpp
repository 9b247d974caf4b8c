// Few-step distilled sampling from the document through the real renderer: `sampler.few_step` gives
// each shot its four warped steps at guidance 1, one conditional DiT pass a step (counted in the report); a
// shot's own few_step replaces the sequence's; the schedule is part of the shot's key.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>

#include "golden_model_facts.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_key.h"
#include "render/shot_record.h"
#include "resolve/resolve_sequence.h"
#include "runtime/torch_runtime.h"
#include "sequence/sequence_io.h"
#include "sequence/validation.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {}  // namespace

class FewStepRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path root() const { return dir_.path().toStdString(); }
  TinyModelSet set_;

  Sequence sequence() const {
    Sequence s;
    s.settings.model = set_.modelSet();
    s.settings.sampler.steps = 12;
    s.settings.sampler.guidance = 1.0;
    s.settings.sampler.fewStep.steps = {1000, 750, 500, 250};
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1), tinyShot("b", 2)};
    s.shots[1].continuity.mode = ContinuityMode::Latent;
    return s;
  }

  render::RenderSummary render(const Sequence& s, const std::string& out) const {
    render::RenderOptions options;
    options.outputDirectory = root() / out;
    options.sequenceDirectory = root();
    options.framesOnDisk = false;
    render::Renderer renderer;
    render::RenderObserver none;
    return renderer.render(s, options, none);
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    set_ = writeTinyModelSet(root() / "raw", 51);
  }

  void fourStepsAtGuidanceOneAreFourPasses() {
    const Sequence s = sequence();
    QVERIFY(validateSequence(s).empty());
    const render::RenderSummary summary = render(s, "four");
    QVERIFY(summary.finished.completed);
    for (const render::ShotFinished& shot : summary.shots) {
      QVERIFY(shot.fewStep.has_value());
      QCOMPARE(shot.fewStep->steps, (std::vector<int>{1000, 750, 500, 250}));
      QCOMPARE(shot.fewStep->update, std::string("euler"));
      QCOMPARE(shot.fewStep->ditPasses, 4);  // one conditional pass a step, no unconditional one
      QCOMPARE(shot.fewStep->timesteps.size(), std::size_t{4});
      QVERIFY(std::abs(shot.fewStep->timesteps[1] - 937.5) < 1e-3);  // warped through shift 5, given as a float
    }
    const auto record = render::readShotRecord(render::shotDirectory(root() / "four", 0, "a"));
    QVERIFY(record && record->fewStep && record->fewStep->ditPasses == 4);

    // Guidance 4 runs both passes every step (and validation says it is not how distills are sampled).
    Sequence guided = s;
    guided.settings.sampler.guidance = 4.0;
    bool warned = false;
    for (const Diagnostic& d : resolve::validate(guided, {root()})) warned = warned || d.path == "sampler.guidance";
    QVERIFY(warned);
    QCOMPARE(render(guided, "guided").shots[0].fewStep->ditPasses, 8);
  }

  void aShotsOwnScheduleReplacesTheSequencesAndIsInItsKey() {
    Sequence s = sequence();
    const std::vector<std::string> before = testing::shotKeysOf(s, root());
    s.shots[1].fewStep = FewStepSettings{{1000, 500}, DistilledUpdate::Renoise, {}};
    const std::vector<std::string> after = testing::shotKeysOf(s, root());
    QCOMPARE(after[0], before[0]);
    QVERIFY(after[1] != before[1]);
    const render::RenderSummary summary = render(s, "own");
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.shots[1].fewStep->ditPasses, 2);
    QCOMPARE(summary.shots[1].fewStep->update, std::string("renoise"));
    // Written and read back unchanged.
    const LoadResult back = parseSequence(serializeSequence(s));
    QVERIFY(back.ok());
    QCOMPARE(*back.sequence, s);
  }

  void aStepListThatDoesNotDescendIsRefused() {
    Sequence s = sequence();
    s.settings.sampler.fewStep.steps = {1000, 1000, 250};
    bool refused = false;
    for (const Diagnostic& d : validateSequence(s))
      refused = refused || (d.isError() && d.path == "sampler.few_step.steps[1]");
    QVERIFY(refused);
  }
};

SHOTCHAIN_TEST(FewStepRenderTest, Core)
#include "test_few_step_render.moc"
