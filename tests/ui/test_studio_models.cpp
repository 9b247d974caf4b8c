#include <QComboBox>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "document/sequence_document.h"
#include "main_window.h"
#include "model_folder.h"
#include "model_library/model_browser.h"
#include "model_library/preferences_dialog.h"
#include "runtime/torch_runtime.h"
#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "studio_settings.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;
namespace fs = std::filesystem;

namespace {

int rowOf(const ModelBrowser& browser, const std::string& fileName) {
  for (std::size_t i = 0; i < browser.files().size(); ++i)
    if (browser.files()[i].file.filename() == fileName) return static_cast<int>(i);
  return -1;
}

QStringList problemsOf(MainWindow& window) {
  QStringList out;
  auto* list = window.findChild<QListWidget*>(QStringLiteral("Problems"));
  for (int i = 0; list && i < list->count(); ++i) out << list->item(i)->text();
  return out;
}

}  // namespace

// The model folders of the preferences, the Models panel and the model problems a render would hit.
class StudioModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    qputenv("SHOTCHAIN_NO_DIALOGS", "1");
    QStandardPaths::setTestModeEnabled(true);
    runtime::initTorchRuntime();
  }

  void browserListsAFolderAndWritesTheChoice() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    makeModelFolder(root);
    writeFile(root / "models" / "vae" / "broken.safetensors", "not a safetensors file");
    const QString folder = QString::fromStdString((root / "models").string());

    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    ModelBrowser* browser = window.modelBrowser();
    QVERIFY(browser);
    QTRY_VERIFY(!browser->isScanning());
    QVERIFY2(browser->useText().contains("builtin:demo"), qPrintable(browser->useText()));
    window.setPreferencesHook([&](PreferencesDialog& dialog) { dialog.addFolder(folder); });
    window.showPreferences();
    QTRY_VERIFY_WITH_TIMEOUT(rowOf(*browser, "wan_tiny.safetensors") >= 0 && !browser->isScanning(), 10000);
    const auto& files = browser->files();
    QCOMPARE(files[static_cast<std::size_t>(rowOf(*browser, "wan_tiny.safetensors"))].id.role, models::ModelRole::Dit);
    QVERIFY(files[static_cast<std::size_t>(rowOf(*browser, "wan_tiny.safetensors"))].id.description.starts_with(
        "Wan 2.1 T2V, tiny"));
    QCOMPARE(files[static_cast<std::size_t>(rowOf(*browser, "vae_tiny.safetensors"))].id.role, models::ModelRole::Vae);
    QCOMPARE(files[static_cast<std::size_t>(rowOf(*browser, "umt5_tiny.safetensors"))].id.role,
             models::ModelRole::TextEncoder);
    QVERIFY(!files[static_cast<std::size_t>(rowOf(*browser, "broken.safetensors"))].problem.empty());
    // A file whose header cannot be read still shows what it takes on disk (it read "0 B").
    QCOMPARE(files[static_cast<std::size_t>(rowOf(*browser, "broken.safetensors"))].bytes, std::uint64_t{22});
    // The selected file's problem is readable in full under the list, not only in a tooltip.
    auto* table = browser->findChild<QTableWidget*>(QStringLiteral("ModelTable"));
    table->setCurrentCell(rowOf(*browser, "broken.safetensors"), 0);
    const std::string brokenProblem = files[static_cast<std::size_t>(rowOf(*browser, "broken.safetensors"))].problem;
    QVERIFY2(browser->detailsText().contains("a file whose header cannot be read") &&
                 browser->detailsText().contains("Cannot be used:") &&
                 browser->detailsText().contains(QString::fromStdString(brokenProblem).toHtmlEscaped()),
             qPrintable(browser->detailsText()));
    table->setCurrentCell(rowOf(*browser, "wan_tiny.safetensors"), 0);
    QVERIFY2(browser->detailsText().contains("Wan 2.1 T2V, tiny, used as the dit") &&
                 !browser->detailsText().contains("Cannot"),
             qPrintable(browser->detailsText()));
    QVERIFY(rowOf(*browser, "dit.safetensors") >= 0);  // the built-in demo model is listed too

    // The broken file cannot be chosen; the DiT can, and the rest of the set comes from its folder.
    QVERIFY(!browser->useRow(rowOf(*browser, "broken.safetensors")));
    QCOMPARE(window.document()->undoStack()->count(), 0);
    QVERIFY(browser->useRow(rowOf(*browser, "wan_tiny.safetensors")));
    const ModelSet& model = window.document()->sequence().settings.model;
    QVERIFY(!model.isBuiltin());
    QCOMPARE(QString::fromStdString(model.folder), folder);
    QCOMPARE(model.dit, std::string("diffusion_models/wan_tiny.safetensors"));
    QCOMPARE(window.document()->undoStack()->count(), 1);
    QVERIFY2(browser->useText().contains("wan_tiny.safetensors") &&
                 browser->useText().contains("vae_tiny.safetensors") &&
                 browser->useText().contains("umt5_tiny.safetensors"),
             qPrintable(browser->useText()));
    for (const QString& problem : problemsOf(window)) QVERIFY2(!problem.startsWith("model"), qPrintable(problem));

    // The built-in model's DiT makes the set builtin:demo again, keeping keys this build does not know.
    SequenceSettings withUnknown = window.document()->sequence().settings;
    withUnknown.model.unknown["future_key"] = "1";
    QVERIFY(window.document()->edit(SetSettings{withUnknown}).empty());
    QVERIFY(browser->useRow(rowOf(*browser, "dit.safetensors")));
    const ModelSet& builtin = window.document()->sequence().settings.model;
    QVERIFY(builtin.isBuiltin() && builtin.folder.empty() && builtin.dit.empty());
    QCOMPARE(builtin.unknown.at("future_key"), std::string("1"));
    window.document()->undoStack()->undo();
    window.document()->undoStack()->undo();

    // A file that is not there is a problem in the Problems panel, naming the field, before any render.
    SequenceSettings settings = window.document()->sequence().settings;
    settings.model.dit = "diffusion_models/gone.safetensors";
    QVERIFY(window.document()->edit(SetSettings{settings}).empty());
    const QStringList problems = problemsOf(window);
    QVERIFY2(problems.size() == 1 && problems[0].startsWith("model.dit") && problems[0].contains("gone.safetensors"),
             qPrintable(problems.join('\n')));
    QVERIFY(browser->useText().contains("gone.safetensors"));
    window.document()->undoStack()->undo();
    window.document()->undoStack()->undo();
    QVERIFY(window.document()->sequence().settings.model.isBuiltin());
    QCOMPARE(problemsOf(window), QStringList{"No problems"});
  }

  // Wan 2.2 A14B from the Models panel: the sequence's DiT is the low-noise expert, the chosen one the high-noise
  // expert (the file names do not decide); each choice is one undo step, and One DiT takes the expert away.
  void twoExpertsFromTheModelsPanel() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    makeModelFolder(root);
    fs::copy_file(golden("wan22_moe_low_tiny.safetensors"),
                  root / "models" / "diffusion_models" / "expert_a.safetensors");
    fs::copy_file(golden("wan22_moe_high_tiny.safetensors"),
                  root / "models" / "diffusion_models" / "expert_b.safetensors");
    fs::copy_file(golden("wan22_ti2v_tiny.safetensors"), root / "models" / "diffusion_models" / "ti2v.safetensors");
    fs::create_directories(root / "models" / "loras");
    fs::copy_file(golden("lora_tiny.pt"), root / "models" / "loras" / "lora_tiny.pt");
    const QString folder = QString::fromStdString((root / "models").string());
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    ModelBrowser* browser = window.modelBrowser();
    window.setPreferencesHook([&](PreferencesDialog& dialog) { dialog.addFolder(folder); });
    window.showPreferences();
    QTRY_VERIFY_WITH_TIMEOUT(rowOf(*browser, "expert_b.safetensors") >= 0 && !browser->isScanning(), 10000);
    // "Use as High-Noise Expert" only for a DiT of a family that comes as a pair of experts (not the TI2V-5B's).
    auto* table = browser->findChild<QTableWidget*>(QStringLiteral("ModelTable"));
    auto* highNoise = browser->findChild<QPushButton*>(QStringLiteral("UseHighNoiseExpert"));
    for (const auto& [file, enabled] : {std::pair{"expert_b.safetensors", true}, std::pair{"ti2v.safetensors", false},
                                        std::pair{"vae_tiny.safetensors", false}, std::pair{"lora_tiny.pt", false}}) {
      table->setCurrentCell(rowOf(*browser, file), 0);
      QVERIFY2(highNoise->isEnabled() == enabled, file);
    }
    QVERIFY(!browser->useRowAsHighNoiseExpert(rowOf(*browser, "expert_b.safetensors")));  // the demo model has one DiT
    QCOMPARE(window.document()->undoStack()->count(), 0);
    QVERIFY(browser->useRow(rowOf(*browser, "expert_a.safetensors")));
    QVERIFY(!browser->useRowAsHighNoiseExpert(rowOf(*browser, "vae_tiny.safetensors")));  // not a DiT
    QVERIFY(browser->useRowAsHighNoiseExpert(rowOf(*browser, "expert_b.safetensors")));
    const ModelSet& model = window.document()->sequence().settings.model;
    QCOMPARE(model.dit, std::string("diffusion_models/expert_a.safetensors"));
    QCOMPARE(model.ditHighNoise, std::string("diffusion_models/expert_b.safetensors"));
    QCOMPARE(window.document()->undoStack()->count(), 2);
    QVERIFY2(browser->useText().contains("high-noise expert <b>expert_b.safetensors</b>") &&
                 browser->useText().contains("low-noise expert <b>expert_a.safetensors</b>"),
             qPrintable(browser->useText()));
    // A LoRA in the folder is listed as one (rank, target, share of the DiT) and joins the sequence's list.
    const int lora = rowOf(*browser, "lora_tiny.pt");
    QVERIFY(lora >= 0);
    const models::CataloguedModel& entry = browser->files()[static_cast<std::size_t>(lora)];
    QVERIFY(entry.lora.has_value());
    QVERIFY2(entry.problem.empty(), entry.problem.c_str());
    QCOMPARE(entry.lora->target, std::string("Wan DiT"));
    QVERIFY(entry.lora->rank > 0 && entry.lora->patchedElements > 0);
    QCOMPARE(table->item(lora, 0)->text(), QString("lora_tiny.pt"));
    QCOMPARE(table->item(lora, 1)->text(), QString("lora"));
    QVERIFY2(table->item(lora, 2)->text().contains("% of the DiT"), qPrintable(table->item(lora, 2)->text()));
    QVERIFY(browser->useRow(lora));
    QCOMPARE(window.document()->sequence().settings.loras.size(), std::size_t{1});
    QVERIFY(window.document()->sequence().settings.loras.front().file.ends_with("lora_tiny.pt"));
    window.document()->undoStack()->undo();
    QVERIFY(browser->useRowAsHighNoiseExpert(-1));
    QVERIFY(window.document()->sequence().settings.model.ditHighNoise.empty());
    window.document()->undoStack()->undo();
    QCOMPARE(window.document()->sequence().settings.model.ditHighNoise,
             std::string("diffusion_models/expert_b.safetensors"));
  }

  // Switching Weights to a models folder before giving one is refused by the document; the inspector
  // and the Problems panel both say so.
  void aRefusedModelChoiceIsAProblemToo() {
    MainWindow window(QStringLiteral("CPU (test)"));
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    QComboBox* source = nullptr;
    for (QComboBox* box : window.findChildren<QComboBox*>())
      if (box->findText(QStringLiteral("Models folder (ComfyUI layout)")) >= 0) source = box;
    QVERIFY(source);
    source->setCurrentIndex(1);
    Q_EMIT source->activated(1);
    QVERIFY(window.document()->sequence().settings.model.isBuiltin());
    const QStringList problems = problemsOf(window);
    QVERIFY2(problems.size() == 1 && problems[0].startsWith("Not applied: model.") && problems[0].contains("missing"),
             qPrintable(problems.join('\n')));
    source->setCurrentIndex(0);
    Q_EMIT source->activated(0);
    QCOMPARE(problemsOf(window), QStringList{"No problems"});
  }

  // The first start asks for the model folders once (here without a dialog) and remembers it.
  void theFirstRunQuestionIsAskedOnce() {
    QFile::remove(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/studio.ini"));
    QVERIFY(!StudioSettings().modelFoldersAsked());
    QVERIFY(StudioSettings().modelFolders().isEmpty());
    MainWindow window(QStringLiteral("CPU (test)"));
    window.offerModelFolders();
    QVERIFY(StudioSettings().modelFoldersAsked());
  }
};

SHOTCHAIN_TEST(StudioModels, Gui)
#include "test_studio_models.moc"
