#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <nlohmann/json.hpp>

#include "document/sequence_document.h"
#include "main_window.h"
#include "monitor/cut_table_model.h"
#include "preview/frame_view.h"
#include "preview/preview_panel.h"
#include "render/render_controller.h"
#include "render/render_state.h"
#include "render/shot_folders.h"
#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

namespace {

// demo.json at 3 steps in `dir`; `crossSteps` for the second shot (a long shot to stop in), and the last
// shot standing alone (mode none) when `exitAlone`.
QString demoCopy(const QTemporaryDir& dir, int crossSteps, bool exitAlone) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(readFile(workflow("demo.json")));
  json["sampler"]["steps"] = 3;
  json["shots"][1]["steps"] = crossSteps;
  if (exitAlone) json["shots"][3]["continuity"]["mode"] = "none";
  const QString path = dir.filePath("film.json");
  writeFile(path.toStdString(), json.dump(2));
  return path;
}

render::SequenceFinished renderAll(MainWindow& window) {
  QSignalSpy finished(window.renderController(), &RenderController::finished);
  if (!window.renderSequence() || !finished.wait(120000)) return {};
  return finished.at(0).at(0).value<render::SequenceFinished>();
}

std::vector<ShotState> statesOf(const MainWindow& window) {
  std::vector<ShotState> states;
  for (const Shot& shot : window.document()->sequence().shots)
    states.push_back(window.renderState()->status(shot.id).state);
  return states;
}

// Which shots the studio shows done.
std::vector<bool> doneOf(const MainWindow& window) {
  std::vector<bool> done;
  for (const ShotState state : statesOf(window)) done.push_back(state == ShotState::Done);
  return done;
}

// What the render folder says: done exactly where it holds the shot's current key (the next render re-uses it).
std::vector<bool> doneOnDisk(const MainWindow& window) {
  std::vector<bool> states;
  const Sequence& sequence = window.document()->sequence();
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const std::string& id = sequence.shots[i].id;
    const std::string key = window.renderState()->currentKey(id);
    const auto folder = render::findFinishedShot(
        window.renderController()->optionsFor(sequence, window.document()->filePath()).outputDirectory,
        static_cast<int>(i), id, key);
    states.push_back(folder && folder->key == key);
  }
  return states;
}

}  // namespace

// The studio's states and figures against what is on disk, with real renders of the demo model.
class StudioTruth : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
  }

  void stopThenReopenShowsWhatIsOnDisk() {
    QTemporaryDir dir;
    const QString path = demoCopy(dir, 30, false);
    std::vector<ShotState> before;
    {
      MainWindow window(QStringLiteral("CPU (test)"));
      QVERIFY(window.openFile(path));
      RenderController* controller = window.renderController();
      connect(controller, &RenderController::stepDone, &window, [&window](int shot, int step) {
        if (shot == 1 && step == 2) window.stopNowAction()->trigger();
      });
      const render::SequenceFinished result = renderAll(window);
      QVERIFY(result.cancelled);
      before = statesOf(window);
      QCOMPARE(doneOf(window), doneOnDisk(window));
      QCOMPARE(before[0], ShotState::Done);
      QCOMPARE(before[1], ShotState::Dirty);  // stopped while it sampled: nothing of it is kept
      QVERIFY(!window.renderState()->cutInto("cross"));
    }
    MainWindow reopened(QStringLiteral("CPU (test)"));
    QVERIFY(reopened.openFile(path));
    QCOMPARE(statesOf(reopened), before);
    reopened.preview()->showFrameAt(0);
    QVERIFY(!reopened.preview()->view()->frame().isNull());  // the finished shot's frame, read from disk
    QTRY_VERIFY(!reopened.renderState()->status("enter").firstThumbnail.isNull());

    const render::SequenceFinished again = renderAll(reopened);
    QVERIFY(again.completed);
    const auto done = static_cast<int>(std::count(before.begin(), before.end(), ShotState::Done));
    QCOMPARE(again.shotsReused, done);
    QCOMPARE(again.shotsRendered, 4 - done);
    for (const ShotState state : statesOf(reopened)) QCOMPARE(state, ShotState::Done);
    QCOMPARE(reopened.cutModel()->rowCount(), 3);
  }

  // An edit shows out of date exactly the shots and cuts the next render redoes; a reorder moves a
  // shot that stands alone with its frames, and its cut is measured again for its new neighbour.
  void editsAndReordersShowWhatTheyInvalidate() {
    QTemporaryDir dir;
    const QString path = demoCopy(dir, 3, true);
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(path));
    QVERIFY(renderAll(window).completed);
    const RenderState& state = *window.renderState();
    SequenceDocument& document = *window.document();
    const auto done = [&state](const char* id) { return state.status(id).state == ShotState::Done; };
    QVERIFY(done("enter") && done("cross") && done("turn") && done("exit"));
    QCOMPARE(state.cuts().size(), std::size_t{3});
    // The Cuts table's columns fit their rows after a render reset them (they showed "e…").
    const QTableView* cuts = window.cutView();
    QVERIFY2(cuts->columnWidth(CutTableModel::Cut) >=
                 cuts->fontMetrics().horizontalAdvance(QString::fromUtf8("Enter → Cross")),
             qPrintable(QString::number(cuts->columnWidth(CutTableModel::Cut))));

    Shot exit = document.sequence().shots[3];
    exit.prompt = "a red circle moving up slowly";
    document.edit(SetShot{3, exit});
    QVERIFY(done("enter") && done("cross") && done("turn"));
    QCOMPARE(state.status("exit").state, ShotState::Stale);
    QVERIFY(state.cutInto("cross") && state.cutInto("turn") && state.cutOutOfDate("exit"));
    QCOMPARE(window.cutModel()->rowCount(), 3);
    QCOMPARE(window.cutModel()->data(window.cutModel()->index(2, CutTableModel::Verdict)).toString(),
             QString("out of date"));
    document.undoStack()->undo();
    QVERIFY(done("exit") && state.cutInto("exit"));

    document.edit(SetShotLength{2, 9});  // trims "turn"; "exit" stands alone, but the cut into it moved
    QVERIFY(done("enter") && done("cross") && done("exit"));
    QCOMPARE(state.status("turn").state, ShotState::Stale);
    QVERIFY(state.cutInto("cross") && state.cutOutOfDate("turn") && state.cutOutOfDate("exit"));
    document.undoStack()->undo();

    document.edit(MoveShot{3, 2});  // enter, cross, exit, turn
    QVERIFY(done("enter") && done("cross") && done("exit"));
    QCOMPARE(state.status("turn").state, ShotState::Stale);  // it hands off from "exit" now
    QVERIFY(state.cutInto("cross") && state.cutOutOfDate("exit") && state.cutOutOfDate("turn"));
    QCOMPARE(doneOf(window), doneOnDisk(window));

    const render::SequenceFinished result = renderAll(window);
    QVERIFY(result.completed);
    QCOMPARE(result.shotsReused, 3);  // "exit" moved from 04-exit to 03-exit with its frames
    QCOMPARE(result.shotsRendered, 1);
    QVERIFY(done("enter") && done("cross") && done("exit") && done("turn"));
    QVERIFY(state.cutInto("exit") && state.cutInto("turn"));
    QCOMPARE(state.cutInto("exit")->fromShotId, std::string("cross"));
    QCOMPARE(doneOf(window), doneOnDisk(window));
  }

  // The first save of an untitled sequence takes its renders along: what was done stays done.
  void savingAnUntitledSequenceKeepsItsRenders() {
    QTemporaryDir dir;
    MainWindow window(QStringLiteral("CPU (test)"));
    QDir(QString::fromStdString(window.renderController()->optionsFor({}, {}).outputDirectory.string()))
        .removeRecursively();
    Sequence sequence = *loadSequenceFile(demoCopy(dir, 3, false).toStdString()).sequence;
    window.document()->reset(sequence, QString(), true);
    QVERIFY(renderAll(window).completed);
    for (const ShotState state : statesOf(window)) QCOMPARE(state, ShotState::Done);
    QVERIFY(window.saveAsFile(dir.filePath("saved.json")));
    QVERIFY(QFileInfo::exists(dir.filePath("saved.render/shots")));
    for (const ShotState state : statesOf(window)) QCOMPARE(state, ShotState::Done);
    QCOMPARE(doneOf(window), doneOnDisk(window));
  }
};

SHOTCHAIN_TEST(StudioTruth, Gui)
#include "test_studio_truth.moc"
