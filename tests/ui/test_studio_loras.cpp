// The inspectors' LoRA lists and two-expert settings, as a user edits them: each change is one
// undo step, a strength core refuses stays out of the document with the reason under the field, a shot's
// own list replaces the sequence's and "As the sequence" gives it back. A shot rendered by two experts says in
// its tooltip which ran when and what moved for them.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHelpEvent>
#include <QLineEdit>
#include <QTableWidget>
#include <QTest>
#include <QToolTip>
#include <QUndoStack>

#include "document/sequence_document.h"
#include "inspector/lora_list_field.h"
#include "inspector/settings_inspector.h"
#include "inspector/shot_inspector.h"
#include "render/render_state.h"
#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "timeline/timeline_view.h"

using namespace shotchain;
using namespace shotchain::ui;
using namespace shotchain::testing;

class StudioLoras : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aShotsOwnListEditedStepByStep() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, q(workflow("demo.json").string()));
    ShotInspector inspector(&document);
    inspector.setShotIndex(1);
    LoraListField* field = inspector.lorasField();
    QVERIFY(field->inheritBox()->isChecked());  // the shot follows the sequence's (empty) list
    QCOMPARE(field->table()->rowCount(), 0);

    field->addFile(
        QString::fromStdString((workflow("demo.json").parent_path() / "loras" / "style.safetensors").string()));
    const Shot& shot = document.sequence().shots[1];
    QVERIFY(shot.loras && shot.loras->size() == 1);
    QCOMPARE(shot.loras->front().file, std::string("loras/style.safetensors"));  // relative to the document
    QCOMPARE(shot.loras->front().strength, 1.0);
    QCOMPARE(document.undoStack()->count(), 1);
    QVERIFY(!field->inheritBox()->isChecked());
    QCOMPARE(field->table()->rowCount(), 1);

    field->table()->item(0, 1)->setText(QStringLiteral("0.5"));
    QCOMPARE(document.sequence().shots[1].loras->front().strength, 0.5);
    QCOMPARE(document.undoStack()->count(), 2);

    field->table()->item(0, 1)->setText(QStringLiteral("25"));  // beyond ±10: refused
    QCOMPARE(document.sequence().shots[1].loras->front().strength, 0.5);
    QCOMPARE(document.undoStack()->count(), 2);
    QVERIFY2(inspector.errorText("loras").contains("outside -10..10"), qPrintable(inspector.errorText("loras")));
    QCOMPARE(field->table()->item(0, 1)->text(), QStringLiteral("0.5"));

    field->inheritBox()->setChecked(true);  // back to the sequence's list
    QVERIFY(!document.sequence().shots[1].loras.has_value());
    QCOMPARE(document.undoStack()->count(), 3);
    document.undoStack()->undo();
    QVERIFY(document.sequence().shots[1].loras.has_value());
    QCOMPARE(field->table()->rowCount(), 1);
    QVERIFY(!field->inheritBox()->isChecked());
  }

  void theSequencesListAndTheExpertFields() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, q(workflow("demo.json").string()));
    SettingsInspector inspector(&document);
    inspector.show();
    auto* field = inspector.findChild<LoraListField*>();
    QVERIFY(field);
    QVERIFY(!field->inheritBox());
    field->addFile(QStringLiteral("/elsewhere/lightx2v_4step.safetensors"));
    QCOMPARE(document.sequence().settings.loras.size(), std::size_t{1});
    QCOMPARE(document.sequence().settings.loras.front().file, std::string("/elsewhere/lightx2v_4step.safetensors"));
    QCOMPARE(document.undoStack()->count(), 1);

    // The expert rows show only for a two-expert set.
    QDoubleSpinBox* boundary = nullptr;
    for (QDoubleSpinBox* box : inspector.findChildren<QDoubleSpinBox*>())
      if (box->specialValueText().contains("0.875")) boundary = box;
    QVERIFY(boundary);
    QVERIFY(!boundary->isVisible());
    SequenceSettings settings = document.sequence().settings;
    settings.model.builtin.clear();
    settings.model.dit = "low.safetensors";
    settings.model.ditHighNoise = "high.safetensors";
    settings.model.vae = "vae.safetensors";
    settings.model.textEncoder = "umt5.safetensors";
    QVERIFY(document.edit(SetSettings{settings}).empty());
    QTRY_VERIFY(boundary->isVisible());
    boundary->setValue(0.9);
    QCOMPARE(document.sequence().settings.sampler.boundary, std::optional<double>(0.9));
    QCOMPARE(document.undoStack()->count(), 3);
  }

  void theShotTooltipSaysWhichExpertRanWhen() {
    SequenceDocument document;
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, q(workflow("demo.json").string()));
    RenderState state;
    TimelineView view(&document, &state);
    view.resize(900, 150);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.zoomToFit();
    const Sequence& sequence = document.sequence();
    state.renderStarted(sequence);
    render::ShotStarted started;
    started.id = sequence.shots[0].id;
    state.shotStarted(started);
    render::ShotFinished finished;
    finished.id = started.id;
    render::ExpertFigures experts;
    experts.experts = {1, 1, 0, 0};
    experts.switchStep = 2;
    experts.residency = "swap";
    experts.bytesMoved = std::uint64_t{4} << 30;
    experts.moveSeconds = 1.5;
    finished.experts = experts;
    state.shotFinished(finished);
    const QPoint at = view.blockRect(0).center();
    QHelpEvent help(QEvent::ToolTip, at, view.mapToGlobal(at));
    QApplication::sendEvent(&view, &help);
    const QString tip = QToolTip::text();
    QVERIFY2(tip.contains("Experts (swap): high noise steps 1–2, low noise 3–4; 4") && tip.contains("moved in 1.5 s"),
             qPrintable(tip));
    QToolTip::hideText();
  }
};

SHOTCHAIN_TEST(StudioLoras, Gui)
#include "test_studio_loras.moc"
