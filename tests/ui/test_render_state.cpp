#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHelpEvent>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QToolTip>
#include <QUndoStack>

#include <algorithm>

#include "document/sequence_document.h"
#include "export/shot_paths.h"
#include "inspector/settings_inspector.h"
#include "monitor/cut_table_model.h"
#include "preview/frame_view.h"
#include "preview/preview_panel.h"
#include "render/render_state.h"
#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/cut_marker.h"
#include "timeline/timeline_view.h"
#include "timeline_fixture.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

// The render state and the cut figures, driven by renderer events (the real renders are in
// test_studio_truth.cpp).
class StudioRenderState : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
  }

  void cutTableModelIsAWellBehavedModel() {
    CutTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRows({{fakeCut(1, 1.1), "Enter", "Cross", true}, {fakeCut(2, 4.2), "Cross", "Turn", true}});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(CutTableModel::ColumnCount));
    QCOMPARE(model.data(model.index(1, CutTableModel::MadRatio)).toString(), QString("4.20"));
    QCOMPARE(model.data(model.index(0, CutTableModel::MeanDeltaPrev), Qt::ToolTipRole).toString(),
             QString("0.100, -0.200"));
    QCOMPARE(model.data(model.index(0, CutTableModel::Cut)).toString(), QString::fromUtf8("Enter → Cross"));
    model.setRows({{fakeCut(1, 1.1), "Enter", "Cross", true},
                   {fakeCut(2, 2.0), "Cross", "Turn", false}});  // re-measured, then edited
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.data(model.index(1, CutTableModel::MadRatio)).toString(), QString("2.00"));
    QCOMPARE(model.data(model.index(1, CutTableModel::Verdict)).toString(), QString("out of date"));
    QVERIFY(model.data(model.index(1, CutTableModel::Flash), Qt::ToolTipRole)
                .toString()
                .contains("Render to measure this cut again"));
    model.setRows({});
    QCOMPARE(model.rowCount(), 0);
  }

  // The after-cut verdict: red figures and a warning in the cut table, a red badge on the timeline's
  // cut marker (none on a fine cut), and the words in the marker's tooltip.
  void afterCutVerdictInTableAndTimeline() {
    continuity::CutMetrics flashed = fakeCut(1, 1.1);
    flashed.afterCutFrames = 8;
    flashed.flash = 5.3;
    flashed.colourDrift = 18.0;
    flashed.spreadDrift = 3.0;
    flashed.structure = 0.95;
    continuity::CutMetrics fine = fakeCut(2, 1.0);
    fine.afterCutFrames = 8;
    fine.flash = 1.1;
    fine.colourDrift = 2.0;
    fine.spreadDrift = 1.0;
    fine.structure = 0.99;

    CutTableModel model;
    model.setRows({{flashed, "Enter", "Cross", true}, {fine, "Cross", "Turn", true}});
    const QColor red(0xe8, 0x4a, 0x4a), green(0x4c, 0xc3, 0x6a);
    QCOMPARE(model.data(model.index(0, CutTableModel::Verdict)).toString(),
             QString::fromUtf8("⚠ flash 5.3×, colour drift ΔE 18.0"));
    QCOMPARE(model.data(model.index(1, CutTableModel::Verdict)).toString(), QString("fine"));
    QCOMPARE(model.data(model.index(0, CutTableModel::Flash)).toString(), QString("5.30"));
    QCOMPARE(model.data(model.index(0, CutTableModel::ColourDrift)).toString(), QString("18.0"));
    QCOMPARE(model.data(model.index(0, CutTableModel::Flash), Qt::ForegroundRole).value<QColor>(), red);
    QCOMPARE(model.data(model.index(0, CutTableModel::SpreadDrift), Qt::ForegroundRole).value<QColor>(), green);
    QCOMPARE(model.data(model.index(0, CutTableModel::Verdict), Qt::ForegroundRole).value<QColor>(), red);
    QCOMPARE(model.data(model.index(1, CutTableModel::Verdict), Qt::ForegroundRole).value<QColor>(), green);
    QVERIFY(model.data(model.index(0, CutTableModel::Flash), Qt::ToolTipRole).toString().startsWith("flash: "));
    QVERIFY(model.data(model.index(0, CutTableModel::Verdict), Qt::ToolTipRole).toString().contains("colour drift: "));
    QVERIFY(model.headerData(CutTableModel::Flash, Qt::Horizontal, Qt::ToolTipRole).toString().endsWith("above 2"));

    Fixture f;
    for (continuity::CutMetrics* cut : {&flashed, &fine}) {
      cut->fromKey = f.state.currentKey(cut->fromShotId);
      cut->toKey = f.state.currentKey(cut->toShotId);
    }
    const auto badgeColour = [&f](int toIndex) {
      const QImage image = f.view.grab().toImage();
      const QRectF badge = cutBadgeRect(f.view.blockRect(toIndex).left() - 1, TimelineView::kTrackTop);
      return image.pixelColor(QPointF(badge.center().x() + 4, badge.center().y()).toPoint());
    };
    QVERIFY(badgeColour(1) != red);  // not measured yet: no badge
    f.state.cutMeasured(flashed);
    f.state.cutMeasured(fine);
    QCOMPARE(badgeColour(1), red);  // two warnings
    QCOMPARE(badgeColour(2), green);
    continuity::CutMetrics amberCut = fine;
    amberCut.toIndex = 3;
    amberCut.toShotId = "exit";
    amberCut.fromShotId = "turn";
    amberCut.flash = 3.0;  // one warning
    amberCut.fromKey = f.state.currentKey("turn");
    amberCut.toKey = f.state.currentKey("exit");
    f.state.cutMeasured(amberCut);
    QCOMPARE(badgeColour(3), QColor(0xf0, 0xb0, 0x3c));
    QCOMPARE(cutBadgeOf(amberCut), CutBadge::Warning);
    QCOMPARE(cutBadgeOf(std::nullopt), CutBadge::None);

    // A click on the badge selects the cut and moves the playhead to the first frame after it.
    QSignalSpy activated(&f.view, &TimelineView::cutActivated);
    const QRectF badge = cutBadgeRect(f.view.blockRect(1).left() - 1, TimelineView::kTrackTop);
    QTest::mouseClick(&f.view, Qt::LeftButton, {}, badge.center().toPoint());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.at(0).at(0).toInt(), 1);
    QCOMPARE(f.view.playhead(), f.document.sequence().startFrame(1));
    const Shot& enter = f.document.sequence().shots[0];
    const Shot& cross = f.document.sequence().shots[1];
    QVERIFY(!cutMarkerTooltip(enter, cross, flashed).contains("MAD ratio"));  // the engineering table: Advanced only
    const QString tip = cutMarkerTooltip(enter, cross, flashed, false, true);
    QVERIFY2(tip.contains("After the cut: warning: flash 5.3×, colour drift ΔE 18.0") && tip.contains("5.30"),
             qPrintable(tip));
    QVERIFY(cutMarkerTooltip(enter, cross, std::nullopt).contains("Not measured yet"));
  }

  void editsMakeLaterHandoffShotsDirty() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, {});
    RenderState state;
    state.documentChanged(document.sequence());
    state.renderStarted(document.sequence());
    for (int i = 0; i < 4; ++i) {
      render::ShotStarted started;
      started.index = i;
      started.id = document.sequence().shots[static_cast<std::size_t>(i)].id;
      started.key = state.currentKey(started.id);
      state.shotStarted(started);
      QVector<QImage> frames(17, QImage(64, 64, QImage::Format_RGB888));
      state.framesDecoded(i, 0, 17, frames);
      render::ShotFinished finished;
      finished.index = i;
      finished.id = started.id;
      finished.key = started.key;
      state.shotFinished(finished);
    }
    state.renderFinished();
    for (const Shot& shot : document.sequence().shots) QCOMPARE(state.status(shot.id).state, ShotState::Done);
    QTRY_VERIFY(!state.status("exit").lastThumbnail.isNull());
    QCOMPARE(state.status("exit").lastThumbnail.height(), RenderState::kThumbnailHeight);

    Shot cross = document.sequence().shots[1];
    cross.prompt = "a blue square";
    document.edit(SetShot{1, cross});
    state.documentChanged(document.sequence());
    QCOMPARE(state.status("enter").state, ShotState::Done);
    QCOMPARE(state.status("cross").state, ShotState::Stale);  // its frames are of the red circle
    QCOMPARE(state.status("turn").state, ShotState::Stale);   // takes its handoff from "cross"
    QCOMPARE(state.status("exit").state, ShotState::Stale);
    QCOMPARE(QString(toString(ShotState::Stale)), QString("out of date"));
    document.undoStack()->undo();
    state.documentChanged(document.sequence());
    QCOMPARE(state.status("turn").state, ShotState::Done);
  }

  // Frames beyond the cache are dropped, least recently shown first, and read back from the PNGs.
  void droppedFramesComeBackFromDisk() {
    QTemporaryDir out;
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, {});
    RenderState state;
    state.documentChanged(document.sequence());
    state.renderStarted(document.sequence());
    const qint64 shotBytes = 17 * QImage(64, 64, QImage::Format_RGB888).sizeInBytes();
    state.setFrameCacheBytes(2 * shotBytes);
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
      render::ShotStarted started;
      started.index = i;
      started.id = document.sequence().shots[static_cast<std::size_t>(i)].id;
      ids.push_back(started.id);
      state.shotStarted(started);
      const std::filesystem::path shotDir = exporting::shotDirectory(out.path().toStdString(), i, started.id);
      std::filesystem::create_directories(exporting::framesDirectory(shotDir));
      QVector<QImage> frames;
      for (int f = 0; f < 17; ++f) {
        QImage frame(64, 64, QImage::Format_RGB888);
        frame.fill(QColor(60 * i, 10 * f, 200));
        QVERIFY(frame.save(QString::fromStdString(exporting::frameFile(shotDir, f + 1).string())));
        frames.push_back(frame);
      }
      state.framesDecoded(i, 0, 17, frames);
      render::ShotFinished finished;
      finished.index = i;
      finished.id = started.id;
      finished.framesWritten = 17;
      finished.directory = shotDir.string();
      state.shotFinished(finished);
      QVERIFY(state.cachedFrameBytes() <= 2 * shotBytes);
    }
    QVERIFY(!state.framesInMemory(ids[0]) && !state.framesInMemory(ids[1]));
    QVERIFY(state.framesInMemory(ids[2]) && state.framesInMemory(ids[3]));

    const QVector<QImage> back = state.frames(ids[0]);
    QCOMPARE(back.size(), 17);
    QCOMPARE(back[5].pixelColor(7, 7), QColor(0, 50, 200));
    QVERIFY(state.framesInMemory(ids[0]));
    QVERIFY(!state.framesInMemory(ids[2]));  // now the least recently shown
    QVERIFY(state.cachedFrameBytes() <= 2 * shotBytes);
  }

  // A shot's tooltip says what its step cache did; the sequence's policy is one undoable edit.
  void shotTooltipSaysWhatTheStepCacheDid() {
    Fixture f;
    const auto tooltipOf = [&f](int index) {
      const QPoint at = f.view.blockRect(index).center();
      QHelpEvent help(QEvent::ToolTip, at, f.view.mapToGlobal(at));
      QApplication::sendEvent(&f.view, &help);
      return QToolTip::text();
    };
    QVERIFY2(!tooltipOf(0).contains("Step cache"), qPrintable(tooltipOf(0)));
    const Sequence& sequence = f.document.sequence();
    f.state.renderStarted(sequence);
    for (int i = 0; i < 2; ++i) {
      render::ShotStarted started;
      started.index = i;
      started.id = sequence.shots[static_cast<std::size_t>(i)].id;
      f.state.shotStarted(started);
      render::ShotFinished finished;
      finished.index = i;
      finished.id = started.id;
      finished.key = f.state.currentKey(started.id);
      render::StepCacheFigures cache;
      cache.policy = i == 0 ? "teacache" : "magcache";
      cache.threshold = 0.2;
      cache.computedPasses = 24;
      cache.skippedPasses = 16;
      if (i == 1) cache.off = "magcache needs ratios measured on this model";
      finished.cache = cache;
      f.state.shotFinished(finished);
    }
    f.state.documentChanged(sequence);
    QCOMPARE(f.state.status(sequence.shots[0].id).state, ShotState::Done);
    QVERIFY2(tooltipOf(0).contains("Step cache teacache 0.2: 24 of 40 DiT passes computed, 16 skipped"),
             qPrintable(tooltipOf(0)));
    QVERIFY2(tooltipOf(1).contains("Step cache magcache: off (magcache needs ratios"), qPrintable(tooltipOf(1)));
    QVERIFY2(!tooltipOf(2).contains("Off:"), qPrintable(tooltipOf(2)));
    Shot off = sequence.shots[2];
    off.enabled = false;
    QVERIFY(f.document.edit(SetShot{2, off}).empty());
    QVERIFY2(tooltipOf(2).contains("<b>Off:</b> not rendered and not in the movie."), qPrintable(tooltipOf(2)));
    QToolTip::hideText();

    SettingsInspector inspector(&f.document);
    inspector.refresh();
    auto* policy = inspector.findChildren<QComboBox*>().at(0);
    for (QComboBox* box : inspector.findChildren<QComboBox*>())
      if (box->findText("first_block") >= 0) policy = box;
    const int before = f.stack()->count();
    policy->setCurrentIndex(policy->findText("easycache"));
    Q_EMIT policy->activated(policy->currentIndex());
    QCOMPARE(f.document.sequence().settings.sampler.cache.policy, StepCachePolicy::EasyCache);
    QCOMPARE(f.stack()->count(), before + 1);
    f.state.documentChanged(sequence);
    QCOMPARE(f.state.status(sequence.shots[0].id).state, ShotState::Stale);  // a changed policy is a changed render
    f.stack()->undo();
    QCOMPARE(f.document.sequence().settings.sampler.cache.policy, StepCachePolicy::Off);
  }

  // States follow the keys, not the edits: a stop leaves what was not reached as it was, a render's
  // own events never make a shot "done" that the next render would redo, and a failed shot stays
  // failed until it is edited.
  void statesAreTheKeysOfWhatIsHeld() {
    Fixture f;
    const Sequence& sequence = f.document.sequence();
    f.state.renderStarted(sequence);
    for (const Shot& shot : sequence.shots) QCOMPARE(f.state.status(shot.id).state, ShotState::Queued);
    render::ShotStarted started;
    started.index = 0;
    started.id = "enter";
    started.key = f.state.currentKey("enter");
    f.state.shotStarted(started);
    render::ShotFinished finished;
    finished.id = "enter";
    finished.key = started.key;
    f.state.shotFinished(finished);
    started.index = 1;
    started.id = "cross";
    started.key = f.state.currentKey("cross");
    f.state.shotStarted(started);
    QCOMPARE(f.state.status("cross").state, ShotState::Rendering);
    f.state.renderFinished();  // stopped in the middle of "cross"
    QCOMPARE(f.state.status("enter").state, ShotState::Done);
    for (const char* id : {"cross", "turn", "exit"}) QCOMPARE(f.state.status(id).state, ShotState::Dirty);

    // A shot finished for a sequence edited meanwhile is out of date at once.
    f.state.renderStarted(sequence);
    started.index = 1;
    f.state.shotStarted(started);
    f.document.edit(SetShotLength{1, 25});
    f.state.documentChanged(f.document.sequence());
    finished.id = "cross";
    finished.key = started.key;
    f.state.shotFinished(finished);
    f.state.shotFailed(2);
    f.state.renderFinished();
    QCOMPARE(f.state.status("cross").state, ShotState::Stale);
    QCOMPARE(f.state.status("turn").state, ShotState::Failed);
    f.document.edit(SetShotLength{2, 25});
    f.state.documentChanged(f.document.sequence());
    QCOMPARE(f.state.status("turn").state, ShotState::Dirty);
    f.stack()->undo();
    f.stack()->undo();
    f.state.documentChanged(f.document.sequence());
    QCOMPARE(f.state.status("cross").state, ShotState::Done);  // back to what was rendered

    // What an edit costs the GUI thread: the keys again, the model files' fingerprints from the cache.
    std::vector<qint64> micros;
    for (int i = 0; i < 21; ++i) {
      QElapsedTimer timer;
      timer.start();
      f.state.documentChanged(f.document.sequence());
      micros.push_back(timer.nsecsElapsed() / 1000);
    }
    std::sort(micros.begin(), micros.end());
    qInfo("documentChanged on the demo's 4 shots: median %lld µs", static_cast<long long>(micros[10]));
  }

  // Model files not digested yet that hold more than the inline limit in all are read on the thread pool: the
  // GUI thread goes on at once, no shot counts as done meanwhile, and the keys come with the digests.
  void unreadModelFilesAreDigestedOffTheGuiThread() {
    QTemporaryDir dir;
    const std::filesystem::path copy = std::filesystem::path(dir.path().toStdString()) / "model";
    std::filesystem::copy(sourceDir() / "resources" / "demo", copy);
    Sequence sequence = *loadSequenceFile(workflow("demo.json")).sequence;
    sequence.settings.model.builtin.clear();
    sequence.settings.model.dit = (copy / "dit.safetensors").string();
    sequence.settings.model.vae = (copy / "vae.safetensors").string();
    sequence.settings.model.textEncoder = (copy / "text_encoder.safetensors").string();
    sequence.settings.model.tokenizer = (copy / "tokenizer.model").string();
    RenderState state;
    state.setInlineDigestBytes(0);
    QSignalSpy changed(&state, &RenderState::changed);
    state.documentChanged(sequence);
    QVERIFY(state.currentKey("enter").empty());
    QVERIFY2(QString::fromStdString(state.keyProblem()).startsWith("reading "), state.keyProblem().c_str());
    QTRY_VERIFY_WITH_TIMEOUT(!state.currentKey("enter").empty(), 20000);
    QVERIFY2(state.keyProblem().empty(), state.keyProblem().c_str());
    QVERIFY(changed.count() >= 2);
    RenderState now;  // the digests are known now: worked out on the spot
    now.setInlineDigestBytes(0);
    now.documentChanged(sequence);
    QCOMPARE(now.currentKey("enter"), state.currentKey("enter"));
    QCOMPARE(now.currentKey("exit"), state.currentKey("exit"));
  }

  // A cut's figures count for the pair of shots they were measured between: an edit of either, or a
  // reorder that puts another shot before it, shows them out of date; the other cuts keep theirs.
  void cutsCountForThePairTheyMeasured() {
    Fixture f;
    f.state.cutMeasured(fakeCut(1, 1.1, &f.state));
    f.state.cutMeasured(fakeCut(2, 1.3, &f.state));
    QVERIFY(f.state.cutInto("cross") && f.state.cutInto("turn"));
    QCOMPARE(f.state.cutRows().size(), std::size_t{2});

    Shot turn = f.document.sequence().shots[2];
    turn.prompt = "a green triangle";
    f.document.edit(SetShot{2, turn});
    f.state.documentChanged(f.document.sequence());
    QVERIFY(f.state.cutInto("cross"));
    QVERIFY(!f.state.cutInto("turn") && f.state.cutOutOfDate("turn"));
    const std::vector<CutRow> rows = f.state.cutRows();
    QCOMPARE(rows.size(), std::size_t{2});
    QVERIFY(rows[0].current && !rows[1].current);
    const Shot& cross = f.document.sequence().shots[1];
    QVERIFY(
        cutMarkerTooltip(cross, turn, f.state.cutInto("turn"), f.state.cutOutOfDate("turn")).contains("Out of date"));
    f.stack()->undo();
    f.state.documentChanged(f.document.sequence());
    QVERIFY(f.state.cutInto("turn"));

    f.document.edit(MoveShot{0, 3});  // enter goes last: cross is first, with no cut into it
    f.state.documentChanged(f.document.sequence());
    QVERIFY(!f.state.cutInto("cross") && !f.state.cutInto("turn"));
    QCOMPARE(f.state.cutRows().size(), std::size_t{1});  // the cut into turn (cross is first now)
    QVERIFY(!f.state.cutRows()[0].current);
    f.document.edit(MoveShot{3, 1});  // cross, enter, turn, exit: the cut into turn was measured from cross
    f.state.documentChanged(f.document.sequence());
    QCOMPARE(f.state.cutRows()[0].fromName, std::string("Cross"));  // the pair it measured, not "Enter"
  }

  // During a render a scrub to a finished frame shows it and holds it; the latent
  // previews of the shot being sampled wait behind "Follow render".
  void scrubbingDuringARenderShowsFinishedFrames() {
    Fixture f;
    PreviewPanel preview(&f.document, &f.state);
    preview.resize(400, 300);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    auto* follow = preview.findChild<QToolButton*>(QStringLiteral("FollowRender"));
    QVERIFY(follow);
    f.state.renderStarted(f.document.sequence());
    preview.setLive(true);
    render::ShotStarted started;
    started.id = "enter";
    f.state.shotStarted(started);
    QVector<QImage> frames;
    for (int i = 0; i < 17; ++i) {
      QImage frame(32, 32, QImage::Format_RGB888);
      frame.fill(QColor(10 * i, 0, 0));
      frames.push_back(frame);
    }
    f.state.framesDecoded(0, 0, 17, frames);
    render::ShotFinished finished;
    finished.id = "enter";
    f.state.shotFinished(finished);
    QImage latent(32, 32, QImage::Format_RGB888);
    latent.fill(Qt::blue);
    preview.showLive(latent, "Cross · step 1/3 · latent preview");
    QCOMPARE(preview.view()->caption(), QString("Cross · step 1/3 · latent preview"));
    QVERIFY(!follow->isVisible());

    preview.showFrameAt(3);  // the user scrubs back into the finished shot
    QCOMPARE(preview.view()->frame().pixelColor(0, 0), QColor(30, 0, 0));
    QVERIFY(follow->isVisible());
    preview.showLive(latent, "Cross · step 2/3 · latent preview");
    QCOMPARE(preview.view()->frame().pixelColor(0, 0), QColor(30, 0, 0));  // held
    QTest::mouseClick(follow, Qt::LeftButton);
    QCOMPARE(preview.view()->caption(), QString("Cross · step 2/3 · latent preview"));
    QVERIFY(!follow->isVisible());

    preview.showFrameAt(5);
    preview.showFrameAt(f.document.sequence().startFrame(1) + 2);  // not rendered yet: back to the render
    QCOMPARE(preview.view()->caption(), QString("Cross · step 2/3 · latent preview"));
    QVERIFY(!follow->isVisible());
  }
};

SHOTCHAIN_TEST(StudioRenderState, Gui)
#include "test_render_state.moc"
