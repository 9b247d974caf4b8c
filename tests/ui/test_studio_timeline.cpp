#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QMimeData>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolTip>
#include <QUndoStack>
#include <QUrl>

#include "document/sequence_document.h"
#include "export/shot_paths.h"
#include "inspector/settings_inspector.h"
#include "inspector/shot_inspector.h"
#include "monitor/cut_table_model.h"
#include "monitor/vram_chart.h"
#include "monitor/vram_panel.h"
#include "render/render_state.h"
#include "resolve/frame_rules.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/cut_marker.h"
#include "timeline/frame_snapping.h"
#include "timeline/timeline_view.h"
#include "timeline_fixture.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

namespace {

std::vector<std::string> ids(const Sequence& sequence) {
  std::vector<std::string> result;
  for (const Shot& shot : sequence.shots) result.push_back(shot.id);
  return result;
}

void moveMouse(QWidget* widget, QPoint to, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QMouseEvent move(QEvent::MouseMove, to, widget->mapToGlobal(to), Qt::NoButton, Qt::LeftButton, modifiers);
  QApplication::sendEvent(widget, &move);
}

// Press, move in a few steps (a ghost follows), release: the way a hand drags.
void drag(QWidget* widget, QPoint from, QPoint to, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QTest::mousePress(widget, Qt::LeftButton, modifiers, from);
  for (int i = 1; i <= 4; ++i) moveMouse(widget, from + (to - from) * i / 4, modifiers);
  QTest::mouseRelease(widget, Qt::LeftButton, modifiers, to);
}

// door.png and hall.png, 8×8, in `dir`.
std::pair<QString, QString> twoPictures(const QTemporaryDir& dir) {
  const QString door = dir.filePath("door.png"), hall = dir.filePath("hall.png");
  QImage(8, 8, QImage::Format_RGB888).save(door);
  QImage(8, 8, QImage::Format_RGB888).save(hall);
  return {door, hall};
}

memory::MemorySample fakeSample(double t, std::uint64_t allocated) {
  memory::MemorySample s;
  s.seconds = t;
  s.device = "cpu";
  s.deviceTotal = 4ull << 30;
  s.deviceFree = 3ull << 30;
  s.allocated = allocated;
  s.reserved = allocated + (64ull << 20);
  s.peakAllocated = allocated;
  s.inactiveSplit = 3ull << 20;
  s.freeFragmentation = 0.25;
  return s;
}

}  // namespace

class StudioTimeline : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
  }

  void lengthsSnapToTheModelsFrameStep() {
    resolve::FrameGeometry wan;  // 4 pixel frames per latent frame
    QCOMPARE(resolve::nearestFrameCount(18, wan), 17);
    QCOMPARE(resolve::nearestFrameCount(19, wan), 21);
    QCOMPARE(resolve::nearestFrameCount(0, wan), 1);
    QCOMPARE(trimmedLength(17, 10.2, false, 1025, wan), 29);
    QCOMPARE(trimmedLength(17, 10.2, true, 1025, wan), 27);
    resolve::FrameGeometry eight = wan;
    eight.temporalFactor = 8;
    QCOMPARE(trimmedLength(17, 10.2, false, 1025, eight), 25);
  }

  void dragReordersAsOneUndoStep() {
    Fixture f;
    const QRect first = f.view.blockRect(0);
    const QRect third = f.view.blockRect(2);
    drag(&f.view, first.center(), QPoint(third.right() - 5, third.center().y()));
    QCOMPARE(ids(f.document.sequence()), (std::vector<std::string>{"cross", "turn", "enter", "exit"}));
    QCOMPARE(f.stack()->count(), 1);
    QCOMPARE(f.view.selectedIndex(), 2);
    f.stack()->undo();
    QCOMPARE(ids(f.document.sequence()), (std::vector<std::string>{"enter", "cross", "turn", "exit"}));
    f.stack()->redo();
    QCOMPARE(ids(f.document.sequence()), (std::vector<std::string>{"cross", "turn", "enter", "exit"}));
  }

  void aClickSelectsWithoutEditing() {
    Fixture f;
    QSignalSpy selected(&f.view, &TimelineView::selectionChanged);
    QTest::mouseClick(&f.view, Qt::LeftButton, {}, f.view.blockRect(1).center());
    QCOMPARE(f.view.selectedIndex(), 1);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(f.stack()->count(), 0);
  }

  void trimSnapsRipplesAndIsOneStep() {
    Fixture f;
    const QRect block = f.view.blockRect(1);
    const int startOfThird = f.document.sequence().startFrame(2);
    const QPoint edge(block.right(), block.center().y());
    // About +9 frames of pointer travel: the ghost snaps to 4k+1 = 25.
    drag(&f.view, edge, edge + QPoint(static_cast<int>(9.3 * f.view.pixelsPerFrame()), 0));
    QCOMPARE(f.document.sequence().shots[1].frames, 25);
    QCOMPARE(f.document.sequence().startFrame(2), startOfThird + 8);  // ripple
    QCOMPARE(f.stack()->count(), 1);
    f.stack()->undo();
    QCOMPARE(f.document.sequence().shots[1].frames, 17);
    QCOMPARE(f.document.sequence().startFrame(2), startOfThird);
  }

  void altBypassesSnappingAndCoreStillDecides() {
    Fixture f;
    const QRect block = f.view.blockRect(0);
    const QPoint edge(block.right(), block.center().y());
    QSignalSpy status(&f.view, &TimelineView::statusMessage);
    drag(&f.view, edge, edge + QPoint(static_cast<int>(1.2 * f.view.pixelsPerFrame()), 0), Qt::AltModifier);
    // 18 frames is not a length Wan renders: core refuses, nothing changes, the reason is reported.
    QCOMPARE(f.document.sequence().shots[0].frames, 17);
    QCOMPARE(f.stack()->count(), 0);
    QCOMPARE(status.count(), 1);
    QVERIFY(status.at(0).at(0).toString().contains("4k+1"));
  }

  void droppedPictureStartsAFreshShotAndBlendsIntoAContinuingOne() {
    Fixture f;
    QTemporaryDir dir;
    const QString image = dir.filePath("still.png");
    QImage(8, 8, QImage::Format_RGB888).save(image);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(image)});
    const QPoint at = f.view.blockRect(0).center();  // "enter" has continuity none
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&f.view, &enter);
    QVERIFY(enter.isAccepted());
    QDragMoveEvent move(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&f.view, &move);
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&f.view, &drop);
    const Shot& shot = f.document.sequence().shots[0];
    QCOMPARE(QString::fromStdString(shot.startImage), image);
    QVERIFY(shot.continuity.fallbackImage.empty());
    QCOMPARE(shot.continuity.mode, ContinuityMode::None);
    QCOMPARE(f.stack()->count(), 1);
    f.stack()->undo();
    QVERIFY(f.document.sequence().shots[0].startImage.empty());

    // A shot that takes a handoff keeps its mode and blends the picture in.
    QVERIFY(f.view.placeImage(1, image));
    QCOMPARE(f.document.sequence().shots[1].continuity.mode, ContinuityMode::Latent);
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[1].continuity.fallbackImage), image);
    QVERIFY(f.document.sequence().shots[1].startImage.empty());
  }

  // A picture dropped on a shot's last quarter is its end keyframe; when that keyframe is the next shot's start,
  // the two shots share it, and one drop (one undo step) changes both.
  void droppedPictureOnTheEndIsTheEndKeyframe() {
    Fixture f;
    QTemporaryDir dir;
    const auto [door, hall] = twoPictures(dir);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(door)});
    const QPoint at = f.view.endKeyframeZone(0).center();
    QVERIFY(f.view.blockRect(0).contains(at) && at.x() > f.view.blockRect(0).center().x());
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&f.view, &enter);
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&f.view, &drop);
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[0].endImage), door);
    QVERIFY(f.document.sequence().shots[0].startImage.empty());
    QCOMPARE(f.stack()->count(), 1);

    // Shared with the next shot's start: the same picture at the cut, changed from either side in one step.
    Sequence shared = f.document.sequence();
    shared.shots[1].startImage = shared.shots[0].endImage;
    f.document.edit(SetShot{1, shared.shots[1]});
    QVERIFY(f.view.placeEndImage(0, hall));
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[0].endImage), hall);
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[1].startImage), hall);
    f.stack()->undo();
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[0].endImage), door);
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[1].startImage), door);
  }

  // A keyframe shared at a cut is one slot over the cut; its context menu clears it from both shots in one step,
  // and a shot's own keyframe is cleared from its block's menu.
  void aSharedKeyframeIsOneSlotOverTheCut() {
    Fixture f;
    QTemporaryDir dir;
    const auto [door, hall] = twoPictures(dir);
    f.view.resize(1400, f.view.height());
    f.view.zoomToFit();
    QVERIFY(f.view.placeEndImage(0, door));
    Sequence shared = f.document.sequence();
    shared.shots[1].startImage = shared.shots[0].endImage;
    shared.shots[1].endImage = hall.toStdString();
    f.document.edit(ReplaceShots{1, 1, {shared.shots[1]}});
    QTRY_VERIFY(!f.view.sharedKeyframeSlot(1).isEmpty());
    const QRect slot = f.view.sharedKeyframeSlot(1);
    const int cut = f.view.blockRect(1).left();
    QVERIFY2(slot.left() < cut && slot.right() > cut, "the slot straddles the cut");
    QVERIFY(f.view.sharedKeyframeSlot(2).isEmpty());  // hall.png is shot 2's own end keyframe
    const int steps = f.stack()->count();

    const auto chooseFirstAction = [] {
      QTimer::singleShot(0, [] {
        QWidget* popup = QApplication::activePopupWidget();
        if (!popup) return;
        const QList<QAction*> actions = popup->actions();
        if (!actions.isEmpty()) actions.front()->trigger();
        popup->close();
      });
    };
    chooseFirstAction();
    QContextMenuEvent onSlot(QContextMenuEvent::Mouse, slot.center(), f.view.mapToGlobal(slot.center()));
    QApplication::sendEvent(&f.view, &onSlot);
    QVERIFY(f.document.sequence().shots[0].endImage.empty());
    QVERIFY(f.document.sequence().shots[1].startImage.empty());
    QCOMPARE(f.stack()->count(), steps + 1);
    f.stack()->undo();
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[1].startImage), door);

    QVERIFY(f.view.clearKeyframe(1, true));
    QVERIFY(f.document.sequence().shots[1].endImage.empty());
    QCOMPARE(QString::fromStdString(f.document.sequence().shots[0].endImage), door);  // not shared: alone
    QVERIFY(!f.view.clearKeyframe(1, true));                                          // nothing left to clear
  }

  void splitIsOneUndoStep() {
    Fixture f;
    const Sequence before = f.document.sequence();
    QVERIFY(f.view.splitShot(1));
    QCOMPARE(f.document.sequence().shots.size(), std::size_t(5));
    QCOMPARE(f.document.sequence().shots[1].frames, 9);
    QCOMPARE(f.document.sequence().shots[2].frames, 9);
    QCOMPARE(f.document.sequence().shots[2].continuity.mode, ContinuityMode::Latent);
    QCOMPARE(f.view.selectedIndex(), 2);
    QCOMPARE(f.stack()->count(), 1);
    QCOMPARE(f.stack()->undoText(), QString("Split Cross"));
    const Sequence split = f.document.sequence();
    f.stack()->undo();
    QCOMPARE(f.document.sequence().shots.size(), std::size_t(4));
    QCOMPARE(f.document.sequence().shots[1].frames, 17);
    QVERIFY2(f.document.sequence() == before, "one undo does not restore the document exactly");
    f.stack()->redo();
    QVERIFY2(f.document.sequence() == split, "redo does not make the same split");
  }

  void aRefusedSplitChangesNothing() {
    Fixture f;
    Sequence sequence = f.document.sequence();
    sequence.shots[1].frames = 5;
    f.document.reset(sequence, {});
    QSignalSpy status(&f.view, &TimelineView::statusMessage);
    QVERIFY(!f.view.splitShot(1));
    QVERIFY(!f.view.splitShot(7));
    QVERIFY(f.document.sequence() == sequence);
    QCOMPARE(f.stack()->count(), 0);
    QCOMPARE(status.count(), 1);
    QVERIFY2(status.at(0).at(0).toString().contains("\"Cross\": 5 frames is too short"),
             qPrintable(status.at(0).at(0).toString()));
  }

  void splitCutsAtThePlayhead() {
    Fixture f;
    const int start = f.document.sequence().startFrame(1);
    f.view.setPlayhead(start + 5);  // nearest 4k+1 boundary: 4 frames in
    QVERIFY(f.view.splitShot(1));
    QCOMPARE(f.document.sequence().shots[1].frames, 5);
    QCOMPARE(f.document.sequence().shots[2].frames, 13);
    f.stack()->undo();
    f.view.setPlayhead(start + 16);  // near the end: the first part keeps all but one block
    QVERIFY(f.view.splitShot(1));
    QCOMPARE(f.document.sequence().shots[1].frames, 13);
    QCOMPARE(f.document.sequence().shots[2].frames, 5);
  }

  void keyboardNudgesMergeIntoOneStep() {
    Fixture f;
    f.view.setSelectedIndex(2);
    f.view.setFocus();
    QTest::keyClick(&f.view, Qt::Key_Right, Qt::ShiftModifier);
    QTest::keyClick(&f.view, Qt::Key_Right, Qt::ShiftModifier);
    QCOMPARE(f.document.sequence().shots[2].frames, 25);
    QCOMPARE(f.stack()->count(), 1);
    f.stack()->undo();
    QCOMPARE(f.document.sequence().shots[2].frames, 17);
  }

  void ctrlWheelZoomsAroundThePointer() {
    Fixture f;
    const double before = f.view.pixelsPerFrame();
    const QPoint pointer = f.view.blockRect(2).center();
    const int blockLeft = f.view.blockRect(2).left();
    QWheelEvent wheel(pointer, f.view.mapToGlobal(pointer), {}, QPoint(0, 120), Qt::NoButton, Qt::ControlModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&f.view, &wheel);
    QVERIFY(f.view.pixelsPerFrame() > before);
    // The frame under the pointer stays under it: the block grows around it.
    const QRect after = f.view.blockRect(2);
    QVERIFY(after.left() < blockLeft);
    QVERIFY(after.contains(pointer));
    f.view.zoomToFit();
    QCOMPARE(f.view.pixelsPerFrame(), before);
  }

  void rulerMovesThePlayhead() {
    Fixture f;
    QSignalSpy moved(&f.view, &TimelineView::playheadMoved);
    const int x = f.view.blockRect(2).left() + 2;
    QTest::mouseClick(&f.view, Qt::LeftButton, {}, QPoint(x, 8));
    QCOMPARE(moved.count(), 1);
    QCOMPARE(f.view.playhead(), f.document.sequence().startFrame(2));
  }

  void inspectorShowsCoreRefusalInline() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, {});
    ShotInspector inspector(&document);
    inspector.setShotIndex(1);
    auto* frames = qobject_cast<QSpinBox*>(inspector.fieldWidget("frames"));
    QVERIFY(frames);
    frames->setValue(18);
    QVERIFY(inspector.errorText("frames").contains("4k+1"));
    QCOMPARE(document.sequence().shots[1].frames, 17);
    QCOMPARE(document.undoStack()->count(), 0);
    frames->setValue(21);
    QVERIFY(inspector.errorText("frames").isEmpty());
    QCOMPARE(document.sequence().shots[1].frames, 21);
  }

  // A document opened with a size its model family cannot take: the field says so, with the fix, until it is fixed.
  void inspectorShowsWhatTheResolvedShotRefuses() {
    Sequence sequence = *loadSequenceFile(workflow("demo.json")).sequence;
    sequence.shots[1].width = 72;
    SequenceDocument document;
    document.reset(sequence, q(workflow("demo.json").string()));
    ShotInspector inspector(&document);
    inspector.setShotIndex(1);
    QVERIFY2(inspector.errorText("size").contains("72 is not a multiple of 16") &&
                 inspector.errorText("size").contains("try 64 or 80"),
             qPrintable(inspector.errorText("size")));
    inspector.setShotIndex(0);
    QVERIFY(inspector.errorText("size").isEmpty());
    inspector.setShotIndex(1);
    Shot fixed = document.sequence().shots[1];
    fixed.width = 80;
    QVERIFY(document.edit(SetShot{1, fixed}).empty());
    QVERIFY2(inspector.errorText("size").isEmpty(), qPrintable(inspector.errorText("size")));
  }

  void startImageFieldIsOneUndoStep() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("wan22_ti2v_5b_three_shots.json")).sequence,
                   q(workflow("wan22_ti2v_5b_three_shots.json").string()));
    ShotInspector inspector(&document);
    inspector.setShotIndex(0);
    auto* start = qobject_cast<QLineEdit*>(inspector.fieldWidget("start_image"));
    QVERIFY(start);
    QCOMPARE(start->text(), QString("images/lighthouse_dusk.png"));
    start->setText("images/other.png");
    Q_EMIT start->editingFinished();
    QCOMPARE(document.sequence().shots[0].startImage, std::string("images/other.png"));
    QCOMPARE(document.undoStack()->count(), 1);
    // The document's validation warns about a picture that is not there, but keeps the edit.
    document.undoStack()->undo();
    QCOMPARE(document.sequence().shots[0].startImage, std::string("images/lighthouse_dusk.png"));
    QCOMPARE(start->text(), QString("images/lighthouse_dusk.png"));
  }

  void typingInAPromptIsOneUndoStep() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, {});
    ShotInspector inspector(&document);
    inspector.show();
    QVERIFY(QTest::qWaitForWindowExposed(&inspector));
    inspector.setShotIndex(0);
    auto* prompt = qobject_cast<QPlainTextEdit*>(inspector.fieldWidget("prompt"));
    prompt->setFocus();
    prompt->moveCursor(QTextCursor::End);
    QTest::keyClicks(prompt, ", slowly");
    QTRY_VERIFY_WITH_TIMEOUT(document.sequence().shots[0].prompt.ends_with(", slowly"), 3000);
    QTest::keyClicks(prompt, " at dusk");
    QTRY_VERIFY_WITH_TIMEOUT(document.sequence().shots[0].prompt.ends_with("at dusk"), 3000);
    QCOMPARE(document.undoStack()->count(), 1);
    document.undoStack()->undo();
    QCOMPARE(document.sequence().shots[0].prompt, std::string("a red circle moving right on a black background"));
  }

  void monitorPaintsFakeSamples() {
    VramPanel panel;
    for (int i = 0; i < 50; ++i)
      panel.addSample(fakeSample(i * 0.1, (100ull + static_cast<std::uint64_t>(i) * 4) << 20));
    panel.addCutSample(1, fakeSample(5.0, 300ull << 20));
    memory::MemoryPlan plan;
    plan.chosen = ResidencyPolicy::Pinned;
    plan.fits = true;
    plan.reason = "everything fits with room to spare";
    plan.items.push_back({"dit weights", 1ull << 30, "bfloat16"});
    plan.notes.push_back("continuation is approximate on this model");
    panel.setPlan(plan);
    QVERIFY(panel.planText().contains("everything fits"));
    QVERIFY(panel.planText().contains("continuation is approximate on this model"));
    QCOMPARE(panel.history().markers().size(), 1);

    QImage image(400, 200, QImage::Format_RGB32);
    image.fill(Qt::magenta);
    QPainter painter(&image);
    panel.chart()->paintChart(painter, image.rect());
    painter.end();
    QVERIFY(image.pixelColor(2, 2) != QColor(Qt::magenta));
    // The allocated area is filled near the bottom right of the plot.
    QColor fill = image.pixelColor(image.width() - 20, image.height() - 22);
    QVERIFY2(fill.blue() > fill.red(), qPrintable(fill.name()));
  }

  void chartLabelsCloseTogetherDoNotOverlap() {
    // Labels 40 px wide, cuts 10 px apart; row 0 is free right of the legend (x ≥ 100).
    const std::vector<int> rows =
        stackLabels({{50, 40}, {110, 40}, {120, 40}, {130, 40}, {140, 40}, {200, 40}}, 3, 100);
    QCOMPARE(rows, (std::vector<int>{1, 0, 1, 2, -1, 0}));
  }
};

SHOTCHAIN_TEST(StudioTimeline, Gui)
#include "test_studio_timeline.moc"
