#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QUndoStack>

#include "document/autosave.h"
#include "document/sequence_document.h"
#include "main_window.h"
#include "monitor/cut_table_model.h"
#include "preview/frame_view.h"
#include "preview/preview_panel.h"
#include "render/render_controller.h"
#include "render/render_state.h"
#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/timeline_view.h"
#include "tiny_model_set.h"
#include "widgets/message_banner.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

class StudioRender : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
  }

  void outputFolderSitsNextToTheSequence() {
    QCOMPARE(RenderController::outputDirectoryFor("/films/night/demo.json"), QString("/films/night/demo.render"));
    QTemporaryDir dir;
    RenderController controller(
        [&dir](render::RenderOptions& options) { options.outputDirectory = dir.filePath("out").toStdString(); });
    const Sequence sequence = *loadSequenceFile(workflow("demo.json")).sequence;
    const render::RenderOptions options = controller.optionsFor(sequence, q(workflow("demo.json").string()));
    QCOMPARE(QString::fromStdString(options.outputDirectory.string()), dir.filePath("out"));
    QVERIFY(options.reuse);
    QCOMPARE(QString::fromStdString(options.sequenceDirectory.string()), q(workflow("").parent_path().string()));
  }

  void theMemoryProbeAnswersFromTheGuiThread() {
    RenderController controller;
    QTRY_VERIFY(controller.sampleMemory().has_value());
    QCOMPARE(controller.sampleMemory()->device, std::string("cpu"));
  }

  // With today's placeholder renderer a render fails at once; with the real one it completes. Either
  // way it ends on the worker thread, the GUI keeps processing events meanwhile, the buttons come back,
  // and a failure lands in the banner.
  void aRenderEndsAndTheButtonsComeBack() {
    QTemporaryDir dir;
    const QString copy = dir.filePath("demo.json");
    std::string demo = readFile(workflow("demo.json"));
    const std::size_t steps = demo.find("\"steps\": ");
    QVERIFY(steps != std::string::npos);
    demo.replace(steps, demo.find_first_of(",}", steps) - steps, "\"steps\": 3");  // a short render is enough here
    writeFile(copy.toStdString(), demo);
    MainWindow window(QStringLiteral("CPU (test)"), nullptr,
                      [](render::RenderOptions& options) { options.previews = true; });
    QVERIFY(window.openFile(copy));
    RenderController* controller = window.renderController();
    QSignalSpy finished(controller, &RenderController::finished);
    QSignalSpy failed(controller, &RenderController::failed);
    QSignalSpy frames(controller, &RenderController::framesDecoded);
    QSignalSpy cuts(controller, &RenderController::cutMeasured);
    int ticks = 0;
    QTimer heartbeat;
    connect(&heartbeat, &QTimer::timeout, [&ticks] { ++ticks; });
    heartbeat.start(5);

    QVERIFY(window.renderAction()->isEnabled());
    window.renderAction()->trigger();
    QVERIFY(controller->isRendering());
    QVERIFY(!window.renderAction()->isEnabled());
    QVERIFY(window.stopNowAction()->isEnabled());
    QVERIFY(finished.wait(120000));
    QVERIFY(ticks > 0);  // the event loop ran while the worker rendered
    QVERIFY(!controller->isRendering());
    QVERIFY(window.renderAction()->isEnabled());
    QVERIFY(!window.stopNowAction()->isEnabled());
    QCOMPARE(controller->outputDirectory(), dir.filePath("demo.render"));

    QVERIFY2(!finished.at(0).at(1).toBool(), failed.isEmpty() ? "failed" : qPrintable(failed.at(0).at(1).toString()));
    QVERIFY(frames.count() > 0);
    QVERIFY(cuts.count() >= 3);
    QCOMPARE(window.cutModel()->rowCount(), 3);
    for (const Shot& shot : window.document()->sequence().shots)
      QCOMPARE(window.renderState()->status(shot.id).state, ShotState::Done);
    QVERIFY(QFileInfo::exists(dir.filePath("demo.render/sequence.mp4")));
    QVERIFY(QFileInfo::exists(dir.filePath("demo.render/report.json")));
  }

  // A preview decoder in the models folder's vae_approx/: while a shot samples, the viewer plays the whole shot
  // decoded from a step's prediction (frames at the shot's size, the caption says so), not the latent mosaic.
  void previewDecoderFramesPlayDuringSampling() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString(), folder = root / "models";
    const TinyModelSet tiny = writeTinyModelSet(root / "tiny", 31, false);
    for (const char* sub : {"diffusion_models", "vae", "text_encoders", "vae_approx"})
      std::filesystem::create_directories(folder / sub);
    std::filesystem::copy_file(tiny.dit, folder / "diffusion_models" / "dit.safetensors");
    std::filesystem::copy_file(tiny.vae, folder / "vae" / "vae.safetensors");
    std::filesystem::copy_file(tiny.textEncoder, folder / "text_encoders" / "umt5.safetensors");
    std::filesystem::copy_file(golden("taehv_tiny_wan21.safetensors"), folder / "vae_approx" / "taew2_1.safetensors");
    Sequence sequence;
    sequence.settings.model.builtin.clear();
    sequence.settings.model.folder = folder.string();
    sequence.settings.model.tokenizer = tiny.tokenizer.string();
    sequence.settings.sampler.steps = 6;
    sequence.shots = {tinyShot("a", 5)};
    const QString file = dir.filePath("tiny.json");
    saveSequenceFile(sequence, file.toStdString());

    MainWindow window(QStringLiteral("CPU (test)"), nullptr,
                      [](render::RenderOptions& options) { options.previews = true; });
    QVERIFY(window.openFile(file));
    RenderController* controller = window.renderController();
    QSignalSpy finished(controller, &RenderController::finished);
    QStringList captions;
    QSize shown;
    connect(controller, &RenderController::stepDone, &window,
            [&](int, int, int, const QImage&, const QVector<QImage>& frames) {
              if (frames.isEmpty()) return;
              captions << window.preview()->view()->caption();
              shown = window.preview()->view()->frame().size();
              QCOMPARE(frames.size(), 9);
            });
    window.renderAction()->trigger();
    QVERIFY(finished.wait(120000));
    QVERIFY2(!finished.at(0).at(1).toBool(), "the render failed");
    QVERIFY(!captions.isEmpty());
    QVERIFY2(captions.front().contains("preview decoder") && captions.front().contains("frame 1/9"),
             qPrintable(captions.front()));
    QCOMPARE(shown, QSize(32, 32));
  }

  // Ctrl+R while the cursor is still in the Prompt field renders what was typed: the typing ends as a click elsewhere
  // would end it (one undo step), before the render reads the document.
  void aPromptTypedJustBeforeRenderIsRendered() {
    QTemporaryDir dir;
    const QString copy = dir.filePath("demo.json");
    std::string demo = readFile(workflow("demo.json"));
    const std::size_t steps = demo.find("\"steps\": ");
    demo.replace(steps, demo.find_first_of(",}", steps) - steps, "\"steps\": 2");
    writeFile(copy.toStdString(), demo);
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(copy));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.timeline()->setSelectedIndex(0);
    QPlainTextEdit* prompt = nullptr;
    for (QPlainTextEdit* edit : window.findChildren<QPlainTextEdit*>())
      if (edit->toPlainText().startsWith("a red circle")) prompt = edit;
    QVERIFY(prompt);
    prompt->setFocus();
    prompt->moveCursor(QTextCursor::End);
    QTest::keyClicks(prompt, " at dusk");
    QSignalSpy finished(window.renderController(), &RenderController::finished);
    QTest::keyClick(prompt, Qt::Key_R, Qt::ControlModifier);
    QVERIFY(window.renderController()->isRendering());
    QVERIFY(window.document()->sequence().shots[0].prompt.ends_with(" at dusk"));
    QVERIFY(finished.wait(120000));
    const std::string record = readFile(dir.filePath("demo.render/shots/01-enter/shot.json").toStdString());
    QVERIFY2(record.find(" at dusk") != std::string::npos, record.substr(0, 400).c_str());
    QCOMPARE(window.document()->undoStack()->count(), 1);
    QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(prompt));  // the cursor stays where it was
  }

  // A shot's failure names the shot once, by its name: core's "shot N (id): " in front of the message is not repeated.
  void aShotFailureNamesTheShotOnce() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    Q_EMIT window.renderController()->failed(1, QStringLiteral("shot 2 (cross): shot 2 (cross): the VAE ran out"), {});
    const QString text = window.banner()->text();
    QVERIFY2(text.contains(QString::fromStdString(window.document()->sequence().shots[1].displayName()) +
                           " failed:</b> the VAE ran out"),
             qPrintable(text));
    QVERIFY2(!text.contains("shot 2 (cross)"), qPrintable(text));
  }

  // The status bar counts what the movie holds: the frames each enabled shot writes (the demo's last shot repeats
  // one frame of the shot before and leaves it out: 67 frames in its MP4, not 68), and a disabled shot not at all.
  void theStatusBarCountsTheMoviesFrames() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    int written = 0;
    for (const resolve::ResolvedShot& shot : window.document()->resolved().shots) written += shot.outputFrames;
    QVERIFY(written < window.document()->sequence().totalFrames());
    QVERIFY2(window.sequenceSummary()->text().startsWith(QString("4 shots · %1 frames").arg(written)),
             qPrintable(window.sequenceSummary()->text()));
    Shot off = window.document()->sequence().shots[1];
    off.enabled = false;
    const int without = written - window.document()->resolved().shots[1].outputFrames;
    QVERIFY(window.document()->edit(SetShot{1, off}).empty());
    QVERIFY2(window.sequenceSummary()->text().startsWith(QString("4 shots (1 off) · %1 frames").arg(without)),
             qPrintable(window.sequenceSummary()->text()));
  }

  void eventsUpdateTheWindow() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir folder;
    QVERIFY(window.openFile(q(workflowCopy("demo.json", folder.path().toStdString()).string())));
    RenderController* c = window.renderController();
    continuity::CutMetrics cut;
    cut.fromIndex = 0;
    cut.toIndex = 1;
    cut.fromShotId = "enter";
    cut.toShotId = "cross";
    cut.fromKey = window.renderState()->currentKey("enter");
    cut.toKey = window.renderState()->currentKey("cross");
    cut.madRatio = 1.2;
    Q_EMIT c->cutMeasured(cut);
    QCOMPARE(window.cutModel()->rowCount(), 1);
    QVERIFY(window.renderState()->cutInto("cross").has_value());
    // A click on the cut's marker selects its row in the Cuts table.
    Q_EMIT window.timeline()->cutActivated(1);
    auto* table = window.findChild<QTableView*>(QStringLiteral("CutTable"));
    QVERIFY(table && table->selectionModel()->isRowSelected(0, {}));

    Q_EMIT c->failed(2, "out of memory in the decoder", "details here");
    QVERIFY(!window.banner()->isHidden());
    QVERIFY(window.banner()->text().contains("Turn"));
    QVERIFY(window.banner()->details().contains("details here"));
  }

  void policySelectorIsAnUndoableSettingsEdit() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QTemporaryDir folder;
    QVERIFY(window.openFile(q(workflowCopy("demo.json", folder.path().toStdString()).string())));
    QComboBox* policy = window.policyBox();
    QCOMPARE(policy->currentText(), QString("auto"));
    Q_EMIT policy->activated(policy->findText("offload"));
    QCOMPARE(window.document()->sequence().settings.policy, ResidencyPolicy::Offload);
    QCOMPARE(window.document()->undoStack()->count(), 1);
    window.document()->undoStack()->undo();
    QCOMPARE(window.document()->sequence().settings.policy, ResidencyPolicy::Auto);
    QCOMPARE(policy->currentText(), QString("auto"));
  }

  void autosaveWritesARecoveryFileAndOffersIt() {
    QTemporaryDir dir;
    const QString path = dir.filePath("night.json");
    writeFile(path.toStdString(), readFile(workflow("demo.json")));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    file.setFileTime(QDateTime::currentDateTime().addSecs(-60), QFileDevice::FileModificationTime);
    file.close();
    {
      SequenceDocument document;
      document.reset(*loadSequenceFile(path.toStdString()).sequence, path);
      Autosave autosave(&document, 20);
      QVERIFY(!autosave.saveNow());  // nothing unsaved
      document.edit(SetShotLength{0, 33});
      QTRY_VERIFY(QFileInfo::exists(Autosave::recoveryPathFor(path)));
      // The studio "crashes" here: the recovery file stays.
    }
    QVERIFY(Autosave::pendingRecovery(path).has_value());

    MainWindow window(QStringLiteral("CPU (test)"));
    QString offered;
    window.setRecoveryPrompt([&offered](const QString& recovery) {
      offered = recovery;
      return true;
    });
    QVERIFY(window.openFile(path));
    QCOMPARE(offered, Autosave::recoveryPathFor(path));
    QCOMPARE(window.document()->sequence().shots[0].frames, 33);
    QVERIFY(window.isWindowModified());
    QVERIFY(window.save());
    QVERIFY(!QFileInfo::exists(Autosave::recoveryPathFor(path)));
    QCOMPARE(loadSequenceFile(path.toStdString()).sequence->shots[0].frames, 33);
  }

  void theDockLayoutPersists() {
    QByteArray state;
    {
      MainWindow window(QStringLiteral("CPU (test)"));
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      QDockWidget* log = window.findChild<QDockWidget*>("LogDock");
      QVERIFY(log);
      log->hide();
      window.close();
    }
    MainWindow again(QStringLiteral("CPU (test)"));
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QVERIFY(!again.findChild<QDockWidget*>("LogDock")->isVisible());
    QVERIFY(again.findChild<QDockWidget*>("TimelineDock")->isVisible());
  }
};

SHOTCHAIN_TEST(StudioRender, Gui)
#include "test_studio_render.moc"
