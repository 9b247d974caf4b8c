// The studio's Open on every bad document of the catalogue (tests/support/bad_documents.h), one
// window for all: each refused file leaves the current document in place, each good one opens, and
// the window survives every file.
#include <QApplication>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "bad_documents.h"
#include "document/sequence_document.h"
#include "main_window.h"
#include "sequence/validation.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

class StudioOpenCatalogue : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { qputenv("SHOTCHAIN_NO_DIALOGS", "1"); }

  void windowSurvivesEveryFile() {
    QTemporaryDir dir;
    MainWindow window(QStringLiteral("CPU (test)"));
    window.show();
    QVERIFY(window.openFile(q(workflow("demo.json").string())));
    const std::vector<BadDocument> cases = badDocumentCatalogue("builtin:demo");
    QVERIFY(cases.size() > 40);
    for (const BadDocument& c : cases) {
      const QString file = q(writeBadDocument(c, dir.path().toStdString()).string());
      const std::size_t shotsBefore = window.document()->sequence().shots.size();
      const bool opened = window.openFile(file);
      QCoreApplication::processEvents();
      QVERIFY2(opened == (c.expect != Expect::Refused || c.modelRule), c.name.c_str());
      if (opened) {
        QCOMPARE(window.document()->sequence().shots.size(), std::size_t(2));
        if (c.modelRule) {
          // Opened, with the model set's rule in the Problems panel as an error at its field.
          const Diagnostics& problems = window.document()->resolved().problems;
          QVERIFY2(std::any_of(problems.begin(), problems.end(),
                               [&](const Diagnostic& d) {
                                 return d.isError() && d.path == c.path && d.message.find(c.rule) != std::string::npos;
                               }),
                   c.name.c_str());
        } else if (c.expect == Expect::Warned) {
          // What the Problems panel lists: the same core validation, with the document's folder.
          const Diagnostics& problems = window.document()->resolved().problems;
          QVERIFY2(!problems.empty() && problems.front().path == c.path, c.name.c_str());
        }
      } else {
        QCOMPARE(window.document()->sequence().shots.size(), shotsBefore);
        QVERIFY2(window.statusBar()->currentMessage().contains(q(c.rule)),
                 qPrintable(window.statusBar()->currentMessage()));
      }
    }
    QVERIFY(window.isVisible());
  }
};

SHOTCHAIN_TEST(StudioOpenCatalogue, Gui)
#include "test_studio_open_catalogue.moc"
