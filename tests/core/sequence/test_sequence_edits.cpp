#include <QTest>

#include "edit_checks.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::testing;

class SequenceEdits : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void insert() {
    Sequence s = demoSequence();
    Shot shot = s.shots[0];
    shot.id = "new";
    rhythm(s, InsertShot{2, shot}, [](const Sequence& r) {
      QCOMPARE(shotIds(r), (std::vector<std::string>{"enter", "cross", "new", "turn", "exit"}));
    });
    Shot tail;
    tail.id = std::string("tail");
    tail.prompt = std::string("a tail shot");
    rhythm(s, InsertShot{s.shots.size(), tail},
           [](const Sequence& r) { QCOMPARE(r.shots.back().id, std::string("tail")); });
  }

  void remove() {
    Sequence s = demoSequence();
    rhythm(s, RemoveShot{1}, [](const Sequence& r) {
      QCOMPARE(shotIds(r), (std::vector<std::string>{"enter", "turn", "exit"}));
      QCOMPARE(r.startFrame(1), 17);
    });
  }

  void moveLaterAndEarlier() {
    Sequence s = demoSequence();
    rhythm(s, MoveShot{0, 2}, [](const Sequence& r) {
      QCOMPARE(shotIds(r), (std::vector<std::string>{"cross", "turn", "enter", "exit"}));
    });
    rhythm(s, MoveShot{3, 0}, [](const Sequence& r) {
      QCOMPARE(shotIds(r), (std::vector<std::string>{"exit", "cross", "turn", "enter"}));
    });
  }

  void duplicate() {
    Sequence s = demoSequence();
    rhythm(s, DuplicateShot{1, {}}, [](const Sequence& r) {
      QCOMPARE(r.shots.size(), std::size_t(5));
      QCOMPARE(r.shots[2].prompt, r.shots[1].prompt);
      QVERIFY(r.shots[2].id != r.shots[1].id);
      QCOMPARE(r.shots[2].name, std::string("Cross copy"));
    });
  }

  void setLengthRipples() {
    Sequence s = demoSequence();
    QCOMPARE(s.startFrame(3), 51);
    rhythm(s, SetShotLength{1, 33}, [](const Sequence& r) {
      QCOMPARE(r.shots[1].frames, 33);
      QCOMPARE(shotIds(r), (std::vector<std::string>{"enter", "cross", "turn", "exit"}));
      QCOMPARE(r.startFrame(2), 50);
      QCOMPARE(r.startFrame(3), 67);
      QCOMPARE(r.totalFrames(), 84);
    });
  }

  void setAnyShotField() {
    Sequence s = demoSequence();
    Shot changed = s.shots[2];
    changed.prompt = "a green triangle moving up";
    changed.seed = 18446744073709551615ull;
    changed.continuity.mode = ContinuityMode::Blend;
    changed.continuity.blendRatio = 0.25;
    changed.guidance = 7.5;
    rhythm(s, SetShot{2, changed}, [&](const Sequence& r) { QVERIFY(r.shots[2] == changed); });
  }

  void setSettings() {
    Sequence s = demoSequence();
    SequenceSettings settings = s.settings;
    settings.fps = 24;
    settings.policy = ResidencyPolicy::Pinned;
    settings.memoryBudgetBytes = 16ull << 30;
    rhythm(s, SetSettings{settings}, [&](const Sequence& r) { QVERIFY(r.settings == settings); });
  }

  void badEditsChangeNothing() {
    Sequence s = demoSequence();
    refused(s, SetShotLength{1, 2000}, "shots[1].frames");
    refused(s, SetShotLength{9, 17}, "shots[9]");
    refused(s, RemoveShot{4}, "shots[4]");
    refused(s, MoveShot{0, 4}, "shots[4]");
    Shot dup = s.shots[0];
    refused(s, InsertShot{1, dup}, "shots[1].id");
    Shot bad = s.shots[0];
    bad.width = 5000;
    refused(s, SetShot{0, bad}, "shots[0].width");
    Shot stolenId = s.shots[1];
    stolenId.id = "enter";
    refused(s, SetShot{1, stolenId}, "shots[1].id");
    SequenceSettings settings = s.settings;
    settings.fps = 0;
    refused(s, SetSettings{settings}, "fps");
    QCOMPARE(applyEdit(s, SetShotLength{1, 0}).errors.front().message, std::string("0 is outside 1..1025"));
  }

  void describesEachEdit() {
    const Sequence s = demoSequence();
    QCOMPARE(describeEdit(s, MoveShot{1, 2}), std::string("Move Cross"));
    QCOMPARE(describeEdit(s, SetShotLength{0, 21}), std::string("Change length of Enter"));
    QCOMPARE(describeEdit(s, RemoveShot{3}), std::string("Delete Exit"));
  }
};

SHOTCHAIN_TEST(SequenceEdits, Appless)
#include "test_sequence_edits.moc"
