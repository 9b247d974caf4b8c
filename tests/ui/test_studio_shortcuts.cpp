#include <QAction>
#include <QPlainTextEdit>
#include <QTest>
#include <QUndoStack>

#include "document/sequence_document.h"
#include "inspector/inspector_panel.h"
#include "main_window.h"
#include "preview/preview_panel.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/timeline_view.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

// An editor's keys in the studio window, pressed as a user presses them.
class StudioShortcuts : public QObject {
  Q_OBJECT

  static void press(MainWindow& window, int key, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    QTest::keyClick(window.timeline(), static_cast<Qt::Key>(key), modifiers);
  }

 private Q_SLOTS:
  void initTestCase() { qputenv("SHOTCHAIN_NO_DIALOGS", "1"); }

  void shuttleLoopAndFrameSteps() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.timeline()->setFocus();
    PreviewPanel* preview = window.preview();
    press(window, Qt::Key_L);
    QVERIFY(preview->isPlaying());
    QCOMPARE(preview->playbackRate(), 1);
    press(window, Qt::Key_L);
    QCOMPARE(preview->playbackRate(), 2);
    press(window, Qt::Key_J);
    QCOMPARE(preview->playbackRate(), -1);
    press(window, Qt::Key_J);
    press(window, Qt::Key_J);
    press(window, Qt::Key_J);
    press(window, Qt::Key_J);
    QCOMPARE(preview->playbackRate(), -8);
    press(window, Qt::Key_K);
    QVERIFY(!preview->isPlaying());
    press(window, Qt::Key_Space);
    QVERIFY(preview->isPlaying());
    press(window, Qt::Key_Space);
    QVERIFY(!preview->isPlaying());

    window.timeline()->setPlayhead(10);
    press(window, Qt::Key_Right);
    QCOMPARE(window.timeline()->playhead(), 11);
    press(window, Qt::Key_Left);
    press(window, Qt::Key_Left);
    QCOMPARE(window.timeline()->playhead(), 9);
    press(window, Qt::Key_I);
    window.timeline()->setPlayhead(12);
    press(window, Qt::Key_O);
    QCOMPARE(preview->loopIn(), 9);
    QCOMPARE(preview->loopOut(), 12);
    press(window, Qt::Key_L);  // plays inside the loop range
    QTRY_VERIFY_WITH_TIMEOUT(window.timeline()->playhead() == 9, 2000);
    QTRY_VERIFY_WITH_TIMEOUT(window.timeline()->playhead() == 12, 2000);
    press(window, Qt::Key_K);
    press(window, Qt::Key_X, Qt::AltModifier);
    QCOMPARE(preview->loopIn(), -1);
    press(window, Qt::Key_End);
    QCOMPARE(window.timeline()->playhead(), window.document()->sequence().totalFrames() - 1);
    press(window, Qt::Key_Home);
    QCOMPARE(window.timeline()->playhead(), 0);
  }

  void splitDisableAndRippleDelete() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.timeline()->setFocus();
    const Sequence before = window.document()->sequence();
    // S splits the shot under the playhead (the third), whatever is selected.
    window.timeline()->setSelectedIndex(0);
    window.timeline()->setPlayhead(before.startFrame(2) + 8);
    press(window, Qt::Key_S);
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(5));
    QCOMPARE(window.document()->sequence().shots[2].frames, 9);
    QCOMPARE(window.document()->undoStack()->count(), 1);
    window.document()->undoStack()->undo();
    QVERIFY(window.document()->sequence() == before);

    // Delete disables the selected shot in place; again enables it. Shift+Delete removes it (ripple).
    window.timeline()->setSelectedIndex(1);
    press(window, Qt::Key_Delete);
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(4));
    QVERIFY(!window.document()->sequence().shots[1].enabled);
    QCOMPARE(window.document()->sequence().totalFrames(), before.totalFrames());
    press(window, Qt::Key_Delete);
    QVERIFY(window.document()->sequence().shots[1].enabled);
    press(window, Qt::Key_Delete, Qt::ShiftModifier);
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(3));
    QCOMPARE(window.document()->sequence().shots[1].id, before.shots[2].id);
    QCOMPARE(window.document()->sequence().startFrame(1), before.startFrame(1));
    QCOMPARE(window.document()->undoStack()->count(), 3);
  }

  // A text field keeps its keys: typing "skip" in the prompt does not split, stop or loop.
  void textFieldsKeepTheirKeys() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.timeline()->setSelectedIndex(0);
    QPlainTextEdit* prompt = nullptr;
    for (QPlainTextEdit* edit : window.findChildren<QPlainTextEdit*>())
      if (edit->objectName() == QStringLiteral("prompt") || edit->toPlainText().startsWith("a red circle"))
        prompt = edit;
    QVERIFY(prompt);
    prompt->setFocus();
    prompt->moveCursor(QTextCursor::End);
    window.timeline()->setPlayhead(5);
    QTest::keyClicks(prompt, " skip lol");
    QTest::keyClick(prompt, Qt::Key_Left);
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->sequence().shots[0].prompt.ends_with(" skip lol"), 3000);
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(4));
    QCOMPARE(window.timeline()->playhead(), 5);
    QVERIFY(!window.preview()->isPlaying());
    QCOMPARE(window.preview()->loopIn(), -1);
  }

  void helpListsEveryShortcut() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QAction* help = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
      if (action->text() == QStringLiteral("&Keyboard Shortcuts")) help = action;
    QVERIFY(help);
    help->trigger();
    const QString table = window.shortcutsText();
    for (const char* entry : {"Shuttle Backward", "Shuttle Forward", "Set Loop In", "Set Loop Out", "Split at Playhead",
                              "Ripple Delete", "Disable / Enable Shot", "Play / Pause", "Go to Start"})
      QVERIFY2(table.contains(entry), entry);
    for (const char* key :
         {"<b>J</b>", "<b>K</b>", "<b>L</b>", "<b>I</b>", "<b>O</b>", "<b>S, Ctrl+K</b>", "<b>Space</b>"})
      QVERIFY2(table.contains(key), key);
    for (QAction* action : window.findChildren<QAction*>())
      if (action->text() == QStringLiteral("Shuttle Forward"))
        QCOMPARE(action->toolTip(), QString("Shuttle Forward (L)"));
  }
};

SHOTCHAIN_TEST(StudioShortcuts, Gui)
#include "test_studio_shortcuts.moc"
