// The catalogue of bad documents (tests/support/bad_documents.h), one row each, run as a user runs
// the CLI: every case is either refused by `validate` naming the file, the JSON path and the rule
// (and then by `render` before any work), or validates and renders. Never a crash, a hang, a raw
// library message, or a render that fails after validating.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "bad_documents.h"
#include "cli_run.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

class BadInputCatalogue : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path root_;
  nlohmann::ordered_json model_;

  static void noLibraryText(const CliRun& run) {
    QVERIFY2(run.exitCode >= 0, qPrintable("crashed or hung: " + run.out.left(2000)));
    for (const char* raw : {"[json.exception", "basic_filebuf", "std::bad_alloc", "terminate called", "what():"})
      QVERIFY2(!run.out.contains(raw), qPrintable(run.out.left(2000)));
  }

 private Q_SLOTS:
  void initTestCase() {
    root_ = dir_.path().toStdString();
    const ModelSet files = writeTinyModelSet(root_ / "models").modelSet();
    model_ = {
        {"dit", files.dit}, {"vae", files.vae}, {"text_encoder", files.textEncoder}, {"tokenizer", files.tokenizer}};
  }

  void everyCase_data() {
    QTest::addColumn<int>("index");
    const auto cases = badDocumentCatalogue(model_);
    for (std::size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name.c_str()) << static_cast<int>(i);
  }

  void everyCase() {
    QFETCH(int, index);
    const BadDocument c = badDocumentCatalogue(model_)[static_cast<std::size_t>(index)];
    const std::filesystem::path file = writeBadDocument(c, root_ / "cases");
    const QString name = q(file.string());
    const QString where = c.path.empty() ? name + ": " : name + ": " + q(c.path);

    const CliRun validate = runCli({"validate", name}, 60000);
    noLibraryText(validate);
    const std::filesystem::path out = file.parent_path() / "render";
    if (c.expect == Expect::Refused) {
      QCOMPARE(validate.exitCode, 1);
      QVERIFY2(validate.out.contains(where) && validate.out.contains(q(c.rule)), qPrintable(validate.out.left(2000)));
      QVERIFY(!validate.out.contains(name + ": ok"));
      const CliRun render = runCli({"render", name, "--out", q(out.string())}, 60000);
      noLibraryText(render);
      QCOMPARE(render.exitCode, 3);
      QVERIFY2(render.err.contains(q(c.rule)), qPrintable(render.err.left(2000)));
      QVERIFY(!std::filesystem::exists(out));
      return;
    }
    QCOMPARE(validate.exitCode, 0);
    QVERIFY2(validate.out.contains(name + ": ok"), qPrintable(validate.out));
    const CliRun render = runCli({"render", name, "--out", q(out.string())});
    noLibraryText(render);
    if (c.expect == Expect::Warned) {
      QVERIFY2(validate.out.contains(where + ": warning: ") && validate.out.contains(q(c.rule)),
               qPrintable(validate.out));
      QCOMPARE(render.exitCode, 4);
      QVERIFY2(render.err.contains(q(c.path)) && render.err.contains(q(c.rule)), qPrintable(render.err));
      QVERIFY(!std::filesystem::exists(out / "shots"));
    } else {
      QVERIFY2(render.exitCode == 0, qPrintable(render.err));
      QVERIFY(std::filesystem::exists(out / "sequence.mp4"));
    }
  }

  // "16GB" is 16·10⁹ bytes, "16GiB" 16·2³⁰, and the plan says the budget back in the unit written.
  void budgetsKeepTheirUnit() {
    for (const auto& [written, shown] :
         {std::pair{"16GB", "budget 16 GB (14.90 GiB)"}, std::pair{"16GiB", "budget 16 GiB"}}) {
      nlohmann::ordered_json doc = catalogueBaseDocument(model_);
      doc["memory"]["budget"] = written;
      const std::filesystem::path file = root_ / (std::string("budget-") + written + ".json");
      writeFile(file, doc.dump(2));
      const CliRun plan = runCli({"plan", q(file.string()), "--device", "cpu"}, 60000);
      QVERIFY2(plan.out.contains(shown), qPrintable(plan.out));
    }
  }
};

SHOTCHAIN_TEST(BadInputCatalogue, Core)
#include "test_bad_input_catalogue.moc"
