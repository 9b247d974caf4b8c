// Edits nobody made and controls that move: a wheel over an unfocused combo or spin box in
// the inspector changes nothing, a split says why the sequence grew, the toolbar's buttons keep their place after
// an edit, and another project starts without the last one's banner.
#include <QAbstractButton>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>
#include <QToolBar>
#include <QUndoStack>
#include <QWheelEvent>

#include "document/sequence_document.h"
#include "inspector/settings_inspector.h"
#include "inspector/shot_inspector.h"
#include "main_window.h"
#include "monitor/cut_table_model.h"
#include "monitor/vram_panel.h"
#include "preview/frame_view.h"
#include "preview/preview_panel.h"
#include "render/render_controller.h"
#include "render/render_state.h"
#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/timeline_view.h"
#include "widgets/message_banner.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

namespace {

void wheel(QWidget* widget, int steps) {
  const QPointF at(widget->width() / 2.0, widget->height() / 2.0);
  QWheelEvent event(at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120 * steps), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(widget, &event);
}

}  // namespace

class StudioSteady : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
    QStandardPaths::setTestModeEnabled(true);
  }

  void theWheelChangesOnlyAFocusedField() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, q(workflow("demo.json").string()));
    ShotInspector inspector(&document);
    inspector.show();
    QVERIFY(QTest::qWaitForWindowExposed(&inspector));
    inspector.setShotIndex(0);
    auto* preset = qobject_cast<QComboBox*>(inspector.fieldWidget("preset"));
    QVERIFY(preset);
    const Shot before = document.sequence().shots[0];
    wheel(preset, -6);  // the pointer passes over it while scrolling the form (up: the demo is at the last preset)
    wheel(inspector.fieldWidget("steps"), -3);
    QCOMPARE(document.sequence().shots[0], before);
    QCOMPARE(document.undoStack()->count(), 0);
    preset->setFocus();  // a field the user clicked takes the wheel
    QTRY_VERIFY(preset->hasFocus());
    wheel(preset, -1);  // up: the demo shot is at the last preset (64×64)
    QVERIFY(!(document.sequence().shots[0] == before));
    QCOMPARE(document.undoStack()->count(), 1);
  }

  void theToolbarDoesNotMoveAfterAnEdit() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QWidget* render = window.findChild<QWidget*>(QStringLiteral("RenderButton"));
    QVERIFY(render);
    const QPoint before = render->mapTo(&window, QPoint(0, 0));
    SequenceSettings settings = window.document()->sequence().settings;
    settings.name = "A much longer name for the sequence, so that the undo step's text is long too";
    QVERIFY(window.document()->edit(SetSettings{settings}).empty());
    QApplication::processEvents();
    QCOMPARE(render->mapTo(&window, QPoint(0, 0)), before);
    auto* toolbar = window.findChild<QToolBar*>(QStringLiteral("MainToolbar"));
    QAction* undo = nullptr;
    for (QAction* action : toolbar->actions())
      if (action->objectName() == "ToolbarUndo") undo = action;
    QVERIFY(undo && undo->isEnabled());
    QCOMPARE(undo->text(), QString("Undo"));
    QVERIFY2(undo->toolTip().startsWith("Undo: "), qPrintable(undo->toolTip()));
    undo->trigger();
    QCOMPARE(window.document()->undoStack()->index(), 0);
    QVERIFY(!undo->isEnabled());
  }

  // Item 7: the previous project's banner does not stay over the next one.
  void anotherProjectStartsClean() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.banner()->showMessage(MessageBanner::Kind::Info, QStringLiteral("<b>Rendered.</b> 4 shot(s) rendered"));
    QVERIFY(window.banner()->isVisible());
    QVERIFY(window.openFile(q(workflow("demo_stream.json").string())));
    QVERIFY(!window.banner()->isVisible());
  }

  // Item 2: a split of a 17-frame shot makes 9 + 9 (both 4k+1, sharing the cut frame); the studio says so and
  // why the sequence grew, instead of growing it without a word.
  void aSplitSaysWhyTheSequenceGrew() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, q(workflow("demo.json").string()));
    RenderState state;
    TimelineView view(&document, &state);
    QSignalSpy status(&view, &TimelineView::statusMessage);
    const int before = document.sequence().totalFrames();
    QVERIFY(view.splitShot(1));
    QCOMPARE(document.sequence().totalFrames(), before + 1);
    QCOMPARE(status.count(), 1);
    const QString message = status.at(0).at(0).toString();
    QVERIFY2(message.contains("Split 17 frames into 9 + 9") && message.contains("4k+1") &&
                 message.contains(QString("(%1 frames)").arg(before + 1)),
             qPrintable(message));
  }

  // Item 3: once a shot's decoded frames arrive (a stream delivers them while it samples), the viewer keeps the
  // newest of them; a latent preview of that shot's later steps does not replace it. Another shot's preview does.
  void decodedFramesWinOverLatentPreviews() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo_stream.json").string())));
    RenderController* controller = window.renderController();
    window.preview()->setLive(true);
    const auto image = [](QColor colour) {
      QImage i(16, 16, QImage::Format_RGB32);
      i.fill(colour);
      return i;
    };
    Q_EMIT controller->stepDone(0, 1, 4, image(Qt::gray), {});  // before any decoded frame: the latent preview
    QCOMPARE(window.preview()->view()->frame().pixelColor(0, 0), QColor(Qt::gray));
    Q_EMIT controller->framesDecoded(0, 0, 17, {image(Qt::red)});
    Q_EMIT controller->stepDone(0, 2, 4, image(Qt::green), {});
    QCOMPARE(window.preview()->view()->frame().pixelColor(0, 0), QColor(Qt::red));
    Q_EMIT controller->stepDone(1, 1, 4, image(Qt::blue), {});  // the next shot has no decoded frame yet
    QCOMPARE(window.preview()->view()->frame().pixelColor(0, 0), QColor(Qt::blue));
  }

  // Item 6: at 1280×720 the window fits the screen and no two docks overlap.
  void fitsTheScreen_data() {
    QTest::addColumn<QSize>("screen");
    QTest::newRow("1280x720") << QSize(1280, 720);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
    QTest::newRow("2560x1440") << QSize(2560, 1440);
  }

  // Item 6: from 1280×720 to 2560×1440 the window fits and no two docks on show overlap.
  void fitsTheScreen() {
    QFETCH(QSize, screen);
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.resize(screen);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QApplication::processEvents();
    QVERIFY2(window.width() <= screen.width() && window.height() <= screen.height(),
             qPrintable(QString("the window is %1×%2").arg(window.width()).arg(window.height())));
    const QList<QDockWidget*> docks = window.findChildren<QDockWidget*>();
    for (QDockWidget* a : docks)
      for (QDockWidget* b : docks) {
        // A dock tabbed behind another is moved out of the window: only those on show count.
        const auto shown = [&window](QDockWidget* d) {
          return d->isVisible() && !d->isFloating() && window.rect().contains(d->geometry());
        };
        if (a == b || !shown(a) || !shown(b)) continue;
        const QRect overlap = a->geometry().intersected(b->geometry());
        QVERIFY2(overlap.isEmpty(), qPrintable(a->windowTitle() + " overlaps " + b->windowTitle()));
      }
    // The viewer keeps the larger share: it grows with the screen.
    QVERIFY2(window.preview()->width() * 3 >= window.width(), qPrintable(QString::number(window.preview()->width())));
  }

  // Item 7: the allocator's figures and settings, the plan's items and the engineering cut figures sit
  // behind View › Advanced Figures; a sequence with no stream shot shows no stream window.
  void engineeringFiguresAreBehindTheAdvancedView() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.setAdvancedFigures(false);
    auto* inspector = window.findChild<SettingsInspector*>();
    QVERIFY(inspector);
    const auto rowShown = [inspector](const char* text) {
      for (QWidget* w : inspector->findChildren<QWidget*>())
        if (auto* box = qobject_cast<QAbstractButton*>(w); box && box->text().contains(QLatin1String(text)))
          return box->isVisibleTo(inspector);
      return false;
    };
    const auto labelShown = [inspector](const char* text) {
      for (QLabel* label : inspector->findChildren<QLabel*>())
        if (label->text() == QLatin1String(text)) return label->isVisibleTo(inspector);
      return false;
    };
    QTRY_VERIFY(!window.vramPanel()->history().empty());
    QVERIFY2(!window.vramPanel()->figuresText().contains("fragmentation"),
             qPrintable(window.vramPanel()->figuresText()));
    QVERIFY(!rowShown("Tune the allocator"));
    QVERIFY(!labelShown("Stream window"));
    QVERIFY(window.cutView()->isColumnHidden(CutTableModel::MadRatio) &&
            !window.cutView()->isColumnHidden(CutTableModel::Flash));

    window.setAdvancedFigures(true);
    QTRY_VERIFY(window.vramPanel()->figuresText().contains("fragmentation"));
    QVERIFY(rowShown("Tune the allocator") && labelShown("Stream window"));
    QVERIFY(!window.cutView()->isColumnHidden(CutTableModel::MadRatio));
    window.setAdvancedFigures(false);

    Shot exit = window.document()->sequence().shots[3];  // a stream shot brings its window back
    exit.continuity.mode = ContinuityMode::Stream;
    window.document()->edit(SetShot{3, exit});
    QVERIFY(labelShown("Stream window"));
  }

  // Item 7: the viewer's I/O loop range is drawn on the ruler.
  void theLoopRangeIsDrawnOnTheRuler() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    TimelineView* timeline = window.timeline();
    timeline->zoomToFit();
    const auto rulerAt = [timeline](int frame) {
      const QImage image = timeline->grab().toImage();
      const int x =
          timeline->blockRect(0).left() + (timeline->blockRect(1).left() - timeline->blockRect(0).left()) * frame / 17;
      return image.pixelColor(x, TimelineView::kRulerHeight / 2 - 4);
    };
    const QColor before = rulerAt(30);
    timeline->setPlayhead(25);
    window.preview()->setLoopIn();
    timeline->setPlayhead(40);
    window.preview()->setLoopOut();
    QCOMPARE(timeline->loopRange(), std::make_pair(25, 40));
    const QColor inside = rulerAt(30), outside = rulerAt(10);
    QVERIFY2(inside.blue() > before.blue() + 20 && outside == before,
             qPrintable(inside.name() + " " + outside.name() + " " + before.name()));
    window.preview()->clearLoop();
    QCOMPARE(timeline->loopRange(), std::make_pair(-1, -1));
  }
};

SHOTCHAIN_TEST(StudioSteady, Gui)
#include "test_studio_steady.moc"
