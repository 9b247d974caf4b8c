#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "document/sequence_document.h"
#include "main_window.h"
#include "sequence/sequence_io.h"
#include "sequence/shot_rules.h"
#include "shots/shot_table_model.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/timeline_view.h"
#include "widgets/message_banner.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

class StudioDocument : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { qputenv("SHOTCHAIN_NO_DIALOGS", "1"); }

  void eachEditIsOneUndoStep() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, "demo.json");
    ShotTableModel model(&document);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);

    QCOMPARE(model.rowCount(), 4);
    QVERIFY(model.setData(model.index(1, ShotTableModel::Frames), 33));
    QCOMPARE(document.sequence().shots[1].frames, 33);
    QCOMPARE(document.undoStack()->count(), 1);
    QVERIFY(document.isModified());
    QCOMPARE(document.undoStack()->undoText(), QString("Change length of Cross"));

    document.undoStack()->undo();
    QCOMPARE(document.sequence().shots[1].frames, 17);
    QCOMPARE(model.data(model.index(1, ShotTableModel::Frames)).toInt(), 17);
    QVERIFY(!document.isModified());
    document.undoStack()->redo();
    QCOMPARE(document.sequence().shots[1].frames, 33);
  }

  void refusedEditsLeaveNoUndoStep() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, "demo.json");
    ShotTableModel model(&document);
    QSignalSpy rejected(&model, &ShotTableModel::editRejected);
    QVERIFY(!model.setData(model.index(0, ShotTableModel::Frames), 18));
    QCOMPARE(document.undoStack()->count(), 0);
    QCOMPARE(rejected.count(), 1);
    QVERIFY(rejected.at(0).at(0).toString().contains("18 is not 4k+1"));
    QVERIFY(!model.setData(model.index(0, ShotTableModel::Seed), "-5"));
    QCOMPARE(document.sequence().shots[0].frames, 17);
  }

  void windowShowsFileAndModifiedState() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir folder;
    QVERIFY(window.openFile(q(workflowCopy("demo.json", folder.path().toStdString()).string())));
    QVERIFY(window.windowTitle().startsWith("demo.json"));
    QVERIFY(!window.isWindowModified());
    QCOMPARE(window.shotView()->model()->rowCount(), 4);
    window.document()->edit(MoveShot{0, 3});
    QVERIFY(window.isWindowModified());
    window.document()->undoStack()->undo();
    QVERIFY(!window.isWindowModified());
  }

  void addShotInsertsCoresDefaultShotAfterTheSelection() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir folder;
    QVERIFY(window.openFile(q(workflowCopy("demo.json", folder.path().toStdString()).string())));
    const Sequence before = window.document()->sequence();
    window.timeline()->setSelectedIndex(1);
    QAction* add = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
      if (action->text() == QStringLiteral("&Add Shot")) add = action;
    QVERIFY(add);
    add->trigger();
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(5));
    QVERIFY(window.document()->sequence().shots[2] == defaultShotAfter(before, 1));
    QCOMPARE(window.timeline()->selectedIndex(), 2);
    QCOMPARE(window.document()->undoStack()->count(), 1);
    window.document()->undoStack()->undo();
    QVERIFY(window.document()->sequence() == before);
  }

  // File › Import ComfyUI Workflow: the workflow becomes an untitled, unsaved document; a workflow
  // that cannot be read keeps the current one; the workflow file itself is never written.
  void comfyWorkflowImportsAsAnUntitledDocument() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir folder;
    QVERIFY(window.openFile(q(workflowCopy("demo.json", folder.path().toStdString()).string())));
    QTemporaryDir dir;
    const QString path = dir.filePath("fox.json");
    const std::string text = R"({
      "1": {"class_type": "UNETLoader", "inputs": {"unet_name": "builtin:demo", "weight_dtype": "default"}},
      "2": {"class_type": "CLIPTextEncode", "inputs": {"text": "a white bar moving left on a gray background"}},
      "3": {"class_type": "EmptyHunyuanLatentVideo", "inputs": {"width": 64, "height": 64, "length": 17, "batch_size": 1}},
      "4": {"class_type": "KSampler", "inputs": {"seed": 7, "steps": 20, "cfg": 4.0, "sampler_name": "uni_pc",
            "scheduler": "simple", "denoise": 1.0, "model": ["1", 0], "positive": ["2", 0], "latent_image": ["3", 0]}},
      "5": {"class_type": "ImageSharpen", "inputs": {"radius": 1}}})";
    writeFile(path.toStdString(), text);
    QAction* import = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
      if (action->text() == QStringLiteral("&Import ComfyUI Workflow…")) import = action;
    QVERIFY(import);
    QVERIFY(window.importComfyFile(path));
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(1));
    QCOMPARE(window.document()->sequence().shots[0].prompt,
             std::string("a white bar moving left on a gray background"));
    QVERIFY(window.document()->filePath().isEmpty());
    QVERIFY(window.isWindowModified());
    QVERIFY2(window.statusBar()->currentMessage().contains(
                 "1 shot(s) of the built-in demo model; 1 node(s) not carried over"),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY2(window.banner()->details().startsWith("Not mapped: node") && !window.banner()->details().contains('\n'),
             qPrintable(window.banner()->details()));
    QCOMPARE(readFile(path.toStdString()), text);

    writeFile(path.toStdString(), "{\"1\": {\"class_type\": \"KSampler\", \"inputs\": {\"model\": [\"1\", 0]}}}");
    QVERIFY(!window.importComfyFile(path));
    QVERIFY(window.statusBar()->currentMessage().contains("cycle"));
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(1));
  }

  void failedOpenKeepsTheCurrentDocument() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir folder;
    QVERIFY(window.openFile(q(workflowCopy("demo.json", folder.path().toStdString()).string())));
    QTemporaryDir dir;
    const QString bad = dir.filePath("bad.json");
    writeFile(bad.toStdString(), "{\"schema\": \"shotchain.sequence/1\", \"shots\": [");
    QVERIFY(!window.openFile(bad));
    QCOMPARE(window.document()->sequence().shots.size(), std::size_t(4));
    QVERIFY(window.windowTitle().startsWith("demo.json"));
  }

  void saveIsAtomicAndMarksClean() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir dir;
    const QString copy = dir.filePath("copy.json");
    writeFile(copy.toStdString(), readFile(workflow("demo.json")));
    QVERIFY(window.openFile(copy));
    window.document()->edit(SetShotLength{0, 21});
    QVERIFY(window.save());
    QVERIFY(!window.isWindowModified());
    const LoadResult back = loadSequenceFile(copy.toStdString());
    QVERIFY(back.ok());
    QCOMPARE(back.sequence->shots[0].frames, 21);
  }
};

SHOTCHAIN_TEST(StudioDocument, Gui)
#include "test_studio_document.moc"
