// Prompts encoded in the background after an edit: the render that follows never loads the text encoder and gives
// the frames a render without kept embeddings gives; a render started while a job runs waits for it (one encoder
// at a time); Preferences shows the embeddings' folder, size and count, keeps the maximum size and clears them.
#include <QDoubleSpinBox>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>
#include <set>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "document/sequence_document.h"
#include "main_window.h"
#include "model_library/preferences_dialog.h"
#include "model_library/prompt_cache_box.h"
#include "quiet_render.h"
#include "render/prompt_precomputer.h"
#include "render/render_controller.h"
#include "studio_settings.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/timeline_view.h"
#include "util/byte_size.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

class StudioPrompts : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  // A folder of its own for each test's embeddings.
  std::filesystem::path useCache(const std::string& name) const {
    ::setenv("SHOTCHAIN_CACHE_DIR", (root() / name).c_str(), 1);
    return render::defaultPromptEmbeddingFolder();
  }

  QString demoCopy(const std::string& name) const {
    std::filesystem::create_directories(root() / name);
    const std::filesystem::path copy = root() / name / "demo.json";
    std::string demo = readFile(workflow("demo.json"));
    const std::size_t steps = demo.find("\"steps\": ");
    demo.replace(steps, demo.find_first_of(",}", steps) - steps, "\"steps\": 2");
    writeFile(copy, demo);
    return QString::fromStdString(copy.string());
  }

  static int promptCount(const SequenceDocument& document) {
    std::set<std::string> prompts;
    for (const resolve::ResolvedShot& shot : document.resolved().shots)
      if (shot.enabled) prompts.insert({shot.prompt, shot.uncondPrompt});
    return static_cast<int>(prompts.size());
  }

  static nlohmann::json renderIn(MainWindow& window) {
    QSignalSpy finished(window.renderController(), &RenderController::finished);
    if (!window.renderSequence()) return {};
    if (!finished.wait(300000) || finished.at(0).at(1).toBool()) return {};
    return nlohmann::json::parse(
        readFile(std::filesystem::path(window.renderController()->outputDirectory().toStdString()) / "report.json"));
  }

  // Each shot's tail as a render of the same document gives without kept embeddings.
  void requireSameTails(MainWindow& window, const std::string& out) const {
    const Sequence& sequence = window.document()->sequence();
    render::RenderOptions options = window.renderController()->optionsFor(sequence, window.document()->filePath());
    const std::filesystem::path precomputed = options.outputDirectory;
    options.outputDirectory = root() / out;
    options.promptEmbeddings = false;
    options.reuse = false;
    QCOMPARE(renderQuietly(sequence, options).textEncoderLoads, 1);
    for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
      const auto shot = static_cast<int>(i);
      const std::string& id = sequence.shots[i].id;
      QVERIFY2(at::equal(shotTailLatent(precomputed, shot, id), shotTailLatent(options.outputDirectory, shot, id)),
               id.c_str());
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
  }

  void anEditedPromptIsEncodedBeforeTheRender() {
    useCache("edit-cache");
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(demoCopy("edit")));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    PromptPrecomputer* prompts = window.promptPrecomputer();
    QSignalSpy done(prompts, &PromptPrecomputer::finished);
    QVERIFY(done.wait(60000));  // the prompts of the document as it opened
    QTRY_VERIFY(!prompts->pending());

    window.timeline()->setSelectedIndex(1);
    QPlainTextEdit* prompt = nullptr;
    for (QPlainTextEdit* edit : window.findChildren<QPlainTextEdit*>())
      if (edit->toPlainText().startsWith("a red circle moving down")) prompt = edit;
    QVERIFY(prompt);
    prompt->setFocus();
    prompt->moveCursor(QTextCursor::End);
    done.clear();
    QTest::keyClicks(prompt, " at dusk");
    QVERIFY(done.wait(60000));
    const auto result = done.at(0).at(0).value<render::PromptPrecompute>();
    QCOMPARE(static_cast<int>(result.encoded.size()), 1);
    QCOMPARE(result.encoded[0].shot, 1);
    QCOMPARE(result.loads, 0);  // the encoder the first job loaded
    const QString status = window.statusBar()->currentMessage();
    QVERIFY2(status.startsWith("Prompt encoded for Cross ("), qPrintable(status));
    QCOMPARE(window.document()->undoStack()->count(), 1);  // the edit, and nothing of the background work

    const nlohmann::json report = renderIn(window);
    QVERIFY(!report.is_null());
    QCOMPARE(report["text_encoder"]["loads"].get<int>(), 0);
    QCOMPARE(report["text_encoder"]["prompts_encoded"].get<int>(), 0);
    QCOMPARE(report["text_encoder"]["prompts_from_cache"].get<int>(), promptCount(*window.document()));
    QCOMPARE(promptCount(*window.document()), 5);  // four prompts and the negative one
    requireSameTails(window, "edit-cold.render");
  }

  // The render is queued behind the job on the render thread: it starts once the job is done, finds every prompt
  // kept, and never loads the encoder itself.
  void aRenderStartedWhileEncodingWaitsForIt() {
    useCache("race-cache");
    MainWindow window(QStringLiteral("CPU (test)"));
    PromptPrecomputer* prompts = window.promptPrecomputer();
    prompts->setDelays(600000, PromptPrecomputer::kKeepEncoderMs);
    QStringList order;
    connect(prompts, &PromptPrecomputer::finished, &window, [&order] { order << "job"; });
    connect(window.renderController(), &RenderController::planReady, &window, [&order] { order << "render"; });
    QVERIFY(window.openFile(demoCopy("race")));
    prompts->start();
    QVERIFY(prompts->busy());
    const nlohmann::json report = renderIn(window);
    QVERIFY(!report.is_null());
    QCOMPARE(order, QStringList({"job", "render"}));
    QCOMPARE(report["text_encoder"]["loads"].get<int>(), 0);
    QCOMPARE(report["text_encoder"]["prompts_from_cache"].get<int>(), 5);
    requireSameTails(window, "race-cold.render");
  }

  void theKeptEncoderIsFreedWhenEditsRest() {
    useCache("idle-cache");
    MainWindow window(QStringLiteral("CPU (test)"));
    PromptPrecomputer* prompts = window.promptPrecomputer();
    prompts->setDelays(0, 50);
    QSignalSpy released(prompts, &PromptPrecomputer::encoderReleased);
    QVERIFY(window.openFile(demoCopy("idle")));
    QVERIFY(released.wait(60000));
    QVERIFY(!prompts->pending());
  }

  // A model set that cannot be read: no job, no dialog; the edit stays.
  void aFailureIsAQuietStatusMessage() {
    useCache("fail-cache");
    const QString file = demoCopy("fail");
    MainWindow window(QStringLiteral("CPU (test)"));
    PromptPrecomputer* prompts = window.promptPrecomputer();
    prompts->setDelays(0, PromptPrecomputer::kKeepEncoderMs);
    QVERIFY(window.openFile(file));
    QSignalSpy done(prompts, &PromptPrecomputer::finished);
    QVERIFY(done.wait(60000));
    window.renderController()->setDevice(QStringLiteral("no-such-device"));
    Shot edited = window.document()->sequence().shots[0];
    edited.prompt = "a yellow circle";
    QVERIFY(window.document()->edit(SetShot{0, edited}).empty());
    QVERIFY(done.wait(60000));
    QVERIFY(!done.last().at(1).toString().isEmpty());
    QVERIFY2(window.statusBar()->currentMessage().startsWith("The prompts were not encoded"),
             qPrintable(window.statusBar()->currentMessage()));
    QCOMPARE(window.document()->sequence().shots[0].prompt, std::string("a yellow circle"));
  }

  void preferencesShowAndClearTheEmbeddings() {
    StudioSettings().setPromptEmbeddingBytes(0);
    QCOMPARE(StudioSettings().promptEmbeddingBytes(), std::uint64_t{1} << 30);
    const std::filesystem::path kept = useCache("prefs-cache");
    std::filesystem::create_directories(kept);
    for (const char* name : {"a.safetensors", "b.safetensors", "c.safetensors"})
      writeFile(kept / name, std::string(1000, 'x'));
    writeFile(kept / "notes.txt", "not an embedding");
    MainWindow window(QStringLiteral("CPU (test)"));
    bool asked = false;
    window.setPreferencesHook([&](PreferencesDialog& dialog) {
      PromptCacheBox* box = dialog.promptCache();
      QCOMPARE(box->folderText(), QString::fromStdString(kept.string()));
      QTRY_COMPARE(box->usageText(), "3 embeddings, " + QString::fromStdString(util::formatByteSize(3000)));
      box->findChild<QDoubleSpinBox*>("PromptCacheMax")->setValue(0.5);
      box->setConfirmation([&asked] {
        asked = true;
        return false;
      });
      box->clearKept();
      QVERIFY(asked);
      QCOMPARE(render::promptEmbeddingUsage(kept).files, 3);
      box->setConfirmation([] { return true; });
      QSignalSpy cleared(box, &PromptCacheBox::cleared);
      box->clearKept();
      QVERIFY(cleared.wait(10000));
      QCOMPARE(box->usageText(), QStringLiteral("Nothing yet"));
    });
    window.showPreferences();
    QCOMPARE(render::promptEmbeddingUsage(kept).files, 0);
    QVERIFY(std::filesystem::exists(kept / "notes.txt"));
    QCOMPARE(StudioSettings().promptEmbeddingBytes(), std::uint64_t{1} << 29);
    const render::RenderOptions options =
        window.renderController()->optionsFor(window.document()->sequence(), window.document()->filePath());
    QCOMPARE(options.promptEmbeddingBytes, std::uint64_t{1} << 29);
  }
};

SHOTCHAIN_TEST(StudioPrompts, Gui)
#include "test_studio_prompts.moc"
