#include <QTest>

#include "edit_checks.h"
#include "sequence/shot_rules.h"
#include "sequence/validation.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

constexpr int kWanFrameStep = 4;  // the demo model's pixel frames per latent frame

// The split is refused with one error at `path` whose message contains each of `words`,
// and the sequence is unchanged.
void splitRefused(const Sequence& s, const std::string& shotId, int frame, const QString& path,
                  const std::vector<std::string>& words, const std::string& newId = {}) {
  const SplitResult result = splitShot(s, shotId, frame, kWanFrameStep, newId);
  QVERIFY(!result.ok());
  QCOMPARE(result.errors.size(), std::size_t(1));
  QCOMPARE(q(result.errors.front().path), path);
  QVERIFY(result.errors.front().isError());
  for (const std::string& word : words)
    QVERIFY2(result.errors.front().message.find(word) != std::string::npos,
             (result.errors.front().message + " lacks " + word).c_str());
}

}  // namespace

// The domain rules the studio's widgets request (split, the default new shot, the fallback image,
// the shown name), checked on core alone: no widget, no application object.
class ShotRules : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void displayNameIsTheNameOrElseTheId() {
    Shot shot;
    shot.id = "shot-3";
    QCOMPARE(shot.displayName(), std::string("shot-3"));
    shot.name = "Opening";
    QCOMPARE(shot.displayName(), std::string("Opening"));
    const Sequence s = demoSequence();
    QCOMPARE(s.shots[1].displayName(), std::string("Cross"));
    QCOMPARE(describeEdit(s, SplitShot{1, 8, kWanFrameStep, {}}), std::string("Split Cross"));
  }

  void splitKeepsEverythingInTheFirstPartAndContinuesInTheSecond() {
    Sequence s = demoSequence();
    s.shots[1].name.clear();  // the second part is named after the shown name
    s.shots[1].negativePrompt = "blurry";
    s.shots[1].steps = 12;
    s.shots[1].continuity.prefixFrames = 2;
    s.shots[1].continuity.conditionNoise = 20;
    s.shots[1].continuity.fallbackImage = "still.png";
    s.shots[1].continuity.anchorColour = true;
    const Sequence before = s;
    const Shot original = s.shots[1];

    const SplitResult result = splitShot(s, "cross", 12, kWanFrameStep);
    QVERIFY2(result.ok(), formatAll(result.errors).c_str());
    QVERIFY2(s == before, "the input changed");
    const Sequence& r = *result.sequence;
    QCOMPARE(shotIds(r), (std::vector<std::string>{"enter", "cross", "shot-5", "turn", "exit"}));
    const Shot& head = r.shots[1];
    const Shot& tail = r.shots[2];

    QCOMPARE(head.frames, 13);
    QCOMPARE(tail.frames, 5);
    QCOMPARE(head.frames + tail.frames, original.frames + 1);  // the shared frame
    QCOMPARE(r.totalFrames(), before.totalFrames() + 1);
    Shot headBack = head;
    headBack.frames = original.frames;
    QVERIFY2(headBack == original, "the first part changed more than its length");

    QCOMPARE(tail.name, std::string("cross (2)"));
    QCOMPARE(tail.prompt, original.prompt);
    QCOMPARE(tail.negativePrompt, original.negativePrompt);
    QCOMPARE(tail.seed, original.seed);
    QCOMPARE(tail.width, original.width);
    QCOMPARE(tail.height, original.height);
    QCOMPARE(tail.steps, original.steps);
    QCOMPARE(tail.enabled, true);
    QCOMPARE(tail.continuity.mode, ContinuityMode::Latent);
    QCOMPARE(tail.continuity.tag, original.continuity.tag);
    QCOMPARE(tail.continuity.anchorColour, true);
    QVERIFY(tail.continuity.fallbackImage.empty());
    QVERIFY(!tail.continuity.prefixFrames.has_value());
    QVERIFY(!tail.continuity.conditionNoise.has_value());
    for (std::size_t i : {0u, 3u, 4u}) QVERIFY(r.shots[i] == before.shots[i == 0 ? 0 : i - 1]);
    QVERIFY(!hasErrors(validateSequence(r)));
  }

  void splitAtEveryBoundaryAddsUpAndTakesAGivenId() {
    const Sequence s = demoSequence();  // 17 frames: cuts at 4, 8 and 12
    for (int frame : {4, 8, 12}) {
      const SplitResult result = splitShot(s, "turn", frame, kWanFrameStep, "turn-b");
      QVERIFY2(result.ok(), formatAll(result.errors).c_str());
      const Sequence& r = *result.sequence;
      QCOMPARE(r.shots[2].id, std::string("turn"));
      QCOMPARE(r.shots[3].id, std::string("turn-b"));
      QCOMPARE(r.shots[3].name, std::string("Turn (2)"));
      QCOMPARE(r.shots[2].frames, frame + 1);
      QCOMPARE(r.shots[3].frames, 17 - frame);
      QVERIFY((r.shots[2].frames - 1) % kWanFrameStep == 0 && (r.shots[3].frames - 1) % kWanFrameStep == 0);
      QCOMPARE(r.startFrame(3), s.startFrame(2) + frame + 1);
      QCOMPARE(r.startFrame(4), s.startFrame(3) + 1);  // the shared frame is in both parts
    }
  }

  void splitRefusesWhatItCannotDo() {
    Sequence s = demoSequence();
    splitRefused(s, "cross", 0, "shots[1]", {"\"Cross\"", "frame 0", "at least 5 frames", "4..12"});
    splitRefused(s, "cross", 17, "shots[1]", {"\"Cross\"", "frame 17"});
    splitRefused(s, "cross", 16, "shots[1]", {"frame 16"});  // leaves only the shared frame
    splitRefused(s, "cross", -4, "shots[1]", {"frame -4"});
    splitRefused(s, "cross", 6, "shots[1]", {"\"Cross\" at frame 6", "multiple of 4", "try 4 or 8"});
    splitRefused(s, "nowhere", 8, "shots", {"\"nowhere\""});
    splitRefused(s, "cross", 8, "shots[2].id", {"\"Cross\"", "\"exit\" for the second part is already used"}, "exit");
    splitRefused(s, "cross", 8, "shots[2].id", {"\"Cross\"", "may contain only"}, "bad id");
    s.shots[1].enabled = false;
    splitRefused(s, "cross", 8, "shots[1].enabled", {"\"Cross\"", "disabled"});
    s.shots[1].enabled = true;
    s.shots[1].frames = 5;
    splitRefused(s, "cross", 4, "shots[1].frames", {"\"Cross\"", "5 frames is too short", "at least 9"});
  }

  // As an edit: one step, undone exactly, redone exactly; refused edits change nothing.
  void splitEditUndoesExactly() {
    Sequence s = demoSequence();
    s.shots[1].continuity.fallbackImage = "still.png";
    rhythm(s, SplitShot{1, 8, kWanFrameStep, {}}, [](const Sequence& r) {
      QCOMPARE(shotIds(r), (std::vector<std::string>{"enter", "cross", "shot-5", "turn", "exit"}));
      QCOMPARE(r.shots[1].frames + r.shots[2].frames, 18);
    });
    refused(s, SplitShot{1, 0, kWanFrameStep, {}}, "shots[1]");
    refused(s, SplitShot{7, 8, kWanFrameStep, {}}, "shots[7]");
    refused(s, SplitShot{1, 4, kWanFrameStep, "enter"}, "shots[2].id");  // "cross" is 9 frames now: one cut, at 4
  }

  void replaceShotsChecksWhatItPutsIn() {
    Sequence s = demoSequence();
    refused(s, ReplaceShots{3, 2, {}}, "shots[3]");
    refused(s, ReplaceShots{5, 0, {}}, "shots[5]");
    refused(s, ReplaceShots{0, 1, {s.shots[0], s.shots[0]}}, "shots[0].id");
    refused(s, ReplaceShots{0, 1, {s.shots[1]}}, "shots[0].id");  // "cross" stays at index 1
    Shot wide = s.shots[0];
    wide.width = 5000;
    refused(s, ReplaceShots{0, 1, {wide}}, "shots[0].width");
    rhythm(s, ReplaceShots{1, 2, {s.shots[2]}}, [](const Sequence& r) {
      QCOMPARE(shotIds(r), (std::vector<std::string>{"enter", "turn", "exit"}));
    });
  }

  // A keyframe shared at a cut is one picture: changed from either side, both shots follow, in one undoable edit;
  // a keyframe that is not shared changes one shot.
  void aSharedKeyframeChangesBothShotsInOneEdit() {
    Sequence s = demoSequence();
    s.shots[0].endImage = "door.png";
    s.shots[1].startImage = "door.png";
    rhythm(s, keyframeEdit(s, 0, true, "window.png"), [](const Sequence& r) {
      QCOMPARE(r.shots[0].endImage, std::string("window.png"));
      QCOMPARE(r.shots[1].startImage, std::string("window.png"));
    });
    rhythm(s, keyframeEdit(s, 1, false, "hall.png"), [](const Sequence& r) {
      QCOMPARE(r.shots[0].endImage, std::string("hall.png"));
      QCOMPARE(r.shots[1].startImage, std::string("hall.png"));
    });
    const Edit own = keyframeEdit(s, 1, true, "stairs.png");
    QVERIFY(std::holds_alternative<SetShot>(own));
    QCOMPARE(std::get<SetShot>(own).shot.endImage, std::string("stairs.png"));
    s.shots[1].startImage = "other.png";
    QVERIFY(std::holds_alternative<SetShot>(keyframeEdit(s, 0, true, "window.png")));
    QVERIFY(std::holds_alternative<SetShot>(keyframeEdit(s, 0, false, "first.png")));  // no shot before the first
  }

  void splitFrameNearFollowsThePlayhead() {
    Shot shot;
    shot.frames = 17;
    QCOMPARE(splitFrameNear(shot, -1, kWanFrameStep), 8);  // outside: the middle
    QCOMPARE(splitFrameNear(shot, 0, kWanFrameStep), 8);
    QCOMPARE(splitFrameNear(shot, 17, kWanFrameStep), 8);
    QCOMPARE(splitFrameNear(shot, 1, kWanFrameStep), 4);  // each part keeps a block
    QCOMPARE(splitFrameNear(shot, 5, kWanFrameStep), 4);
    QCOMPARE(splitFrameNear(shot, 6, kWanFrameStep), 8);
    QCOMPARE(splitFrameNear(shot, 16, kWanFrameStep), 12);
    shot.frames = 33;
    QCOMPARE(splitFrameNear(shot, 100, kWanFrameStep), 16);
    QCOMPARE(splitFrameNear(shot, 21, kWanFrameStep), 20);
  }

  void shotAtFrameFindsTheShotUnderAFrame() {
    Sequence s;
    for (int frames : {17, 9, 33}) {
      Shot shot;
      shot.frames = frames;
      s.shots.push_back(shot);
    }
    QCOMPARE(shotAtFrame(s, 0), std::optional<std::size_t>(0));
    QCOMPARE(shotAtFrame(s, 16), std::optional<std::size_t>(0));
    QCOMPARE(shotAtFrame(s, 17), std::optional<std::size_t>(1));
    QCOMPARE(shotAtFrame(s, 25), std::optional<std::size_t>(1));
    QCOMPARE(shotAtFrame(s, 26), std::optional<std::size_t>(2));
    QCOMPARE(shotAtFrame(s, 58), std::optional<std::size_t>(2));
    QVERIFY(!shotAtFrame(s, 59));
    QVERIFY(!shotAtFrame(s, -1));
    QVERIFY(!shotAtFrame(Sequence{}, 0));
  }

  void defaultShotContinuesThePreviousOne() {
    Sequence s = demoSequence();
    s.shots[1].seed = 77;
    s.shots[1].width = 128;
    s.shots[1].frames = 21;
    s.shots[1].negativePrompt = "blurry";
    const Shot shot = defaultShotAfter(s, 1);
    QCOMPARE(shot.id, std::string("shot-5"));
    QVERIFY(!s.indexOf(shot.id));
    QCOMPARE(shot.name, std::string("Shot 5"));
    QCOMPARE(shot.width, 128);
    QCOMPARE(shot.height, 64);
    QCOMPARE(shot.frames, 21);
    QCOMPARE(shot.seed, std::uint64_t(77));
    QCOMPARE(shot.prompt, s.shots[1].prompt);
    QCOMPARE(shot.negativePrompt, std::string("blurry"));
    QCOMPARE(shot.continuity.mode, ContinuityMode::Latent);
    QCOMPARE(shot.continuity.tag, std::string("circle"));
    QVERIFY(shot.continuity.fallbackImage.empty());
    QVERIFY(!shot.steps && !shot.guidance && !shot.shift);
    rhythm(s, InsertShot{2, shot}, [](const Sequence& r) { QCOMPARE(r.shots[2].id, std::string("shot-5")); });
    QVERIFY(!hasErrors(validateSequence(s)));

    QCOMPARE(defaultShotAfter(s, 99).seed, std::uint64_t(1004));  // past the end: after the last shot
    s.shots[3].continuity = Continuity{};
    s.shots[3].continuity.tag.clear();  // writes no tail: nothing to continue from
    const Shot fresh = defaultShotAfter(s, 3);
    QCOMPARE(fresh.continuity.mode, ContinuityMode::None);
    QVERIFY(!fresh.continuity.tag.empty());
  }

  void defaultShotOfAnEmptySequence() {
    Sequence s;
    s.settings.model.builtin = "demo";
    Shot shot = defaultShotAfter(s, 0);
    QCOMPARE(shot.id, std::string("shot-1"));
    QCOMPARE(shot.name, std::string("Shot 1"));
    QCOMPARE(shot.width, 64);  // the demo model's size
    QCOMPARE(shot.height, 64);
    QCOMPARE(shot.continuity.mode, ContinuityMode::None);
    QVERIFY(validateShot(shot, 0).size() == 1);  // only the empty prompt's warning
    s.settings.model.builtin.clear();
    s.settings.model.folder = "models";
    shot = defaultShotAfter(s, 0);
    QCOMPARE(shot.width, Shot{}.width);
    QCOMPARE(shot.height, Shot{}.height);
  }

  void aFallbackImageMeansBlend() {
    Shot shot;
    QCOMPARE(shot.continuity.mode, ContinuityMode::None);
    setFallbackImage(shot, "still.png");
    QCOMPARE(shot.continuity.fallbackImage, std::string("still.png"));
    QCOMPARE(shot.continuity.mode, ContinuityMode::Blend);
    setFallbackImage(shot, "");
    QVERIFY(shot.continuity.fallbackImage.empty());
    QCOMPARE(shot.continuity.mode, ContinuityMode::Blend);  // clearing keeps the mode

    for (ContinuityMode mode : {ContinuityMode::Latent, ContinuityMode::LatentOverlap, ContinuityMode::VaeRoundtrip}) {
      Shot handed;
      handed.continuity.mode = mode;
      setFallbackImage(handed, "still.png");
      QCOMPARE(handed.continuity.mode, mode);
      QCOMPARE(handed.continuity.fallbackImage, std::string("still.png"));
    }
    Shot none;
    setFallbackImage(none, "");
    QCOMPARE(none.continuity.mode, ContinuityMode::None);
  }

  void documentPathsAreRelativeInsideTheSequenceFolder() {
    const std::filesystem::path base = std::filesystem::temp_directory_path() / "night-shoot";
    QCOMPARE(documentPath(base, base / "images" / "still.png"), std::string("images/still.png"));
    QCOMPARE(documentPath(base / "", base / "still.png"), std::string("still.png"));
    QCOMPARE(documentPath(base, base / "a" / ".." / "still.png"), std::string("still.png"));
    const std::filesystem::path outside = base.parent_path() / "elsewhere" / "still.png";
    QCOMPARE(documentPath(base, outside), outside.generic_string());
    QCOMPARE(documentPath({}, base / "still.png"), (base / "still.png").generic_string());
    QVERIFY(std::filesystem::path(documentPath({}, "still.png")).is_absolute());
  }
};

SHOTCHAIN_TEST(ShotRules, Appless)
#include "test_shot_rules.moc"
