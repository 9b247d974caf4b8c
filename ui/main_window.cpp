#include "main_window.h"

#include <QComboBox>
#include <QDockWidget>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScreen>
#include <QStatusBar>
#include <QTableView>
#include <QTime>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include "document/autosave.h"
#include "document/sequence_document.h"
#include "inspector/inspector_panel.h"
#include "inspector/settings_inspector.h"
#include "model_library/model_browser.h"
#include "monitor/cut_table_model.h"
#include "monitor/vram_panel.h"
#include "preview/preview_panel.h"
#include "render/prompt_precomputer.h"
#include "render/render_state.h"
#include "sequence/shot_rules.h"
#include "sequence/validation.h"
#include "shots/shot_table_model.h"
#include "studio_settings.h"
#include "timeline/timeline_panel.h"
#include "timeline/timeline_view.h"
#include "widgets/message_banner.h"

// The window: its docks, the shot commands and the views that follow the document.
namespace shotchain::ui {
namespace {

QSize sizeFor(const QSize& available) {
  return {std::min(1600, available.width() * 96 / 100), std::min(1000, available.height() * 94 / 100)};
}

}  // namespace

bool dialogsAllowed() { return !qEnvironmentVariableIsSet("SHOTCHAIN_NO_DIALOGS"); }

MainWindow::MainWindow(const QString& deviceDescription, QWidget* parent, RenderController::OptionsHook renderHook)
    : QMainWindow(parent),
      settings_(new StudioSettings),
      document_(new SequenceDocument(this)),
      renderState_(new RenderState(this)),
      controller_(new RenderController(std::move(renderHook), this)),
      prompts_(new PromptPrecomputer(document_, controller_, this)),
      autosave_(new Autosave(document_, 5000, this)),
      shotModel_(new ShotTableModel(document_, this)),
      cutModel_(new CutTableModel(this)),
      shotView_(new QTableView(this)),
      timeline_(new TimelineView(document_, renderState_, this)),
      inspector_(new InspectorPanel(document_, this)),
      preview_(new PreviewPanel(document_, renderState_, this)),
      vram_(new VramPanel(this)),
      banner_(new MessageBanner(this)),
      problems_(new QListWidget(this)),
      log_(new QPlainTextEdit(this)),
      summary_(new QLabel(this)),
      deviceLabel_(new QLabel(this)),
      progress_(new QProgressBar(this)),
      progressText_(new QLabel(this)),
      policy_(new QComboBox(this)),
      memoryTimer_(new QTimer(this)),
      deviceDescription_(deviceDescription) {
  setObjectName(QStringLiteral("MainWindow"));
  problems_->setObjectName(QStringLiteral("Problems"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  // The right column (inspector, memory) runs the full height; the timeline spans the rest.
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);

  auto* centre = new QWidget(this);
  auto* centreLayout = new QVBoxLayout(centre);
  centreLayout->setContentsMargins(0, 0, 0, 0);
  centreLayout->setSpacing(0);
  centreLayout->addWidget(banner_);
  centreLayout->addWidget(preview_, 1);
  setCentralWidget(centre);

  QString device = settings_->device();
  if (device.isEmpty())
    device = deviceDescription.contains(QStringLiteral("CPU")) ? QStringLiteral("cpu") : QStringLiteral("cuda");
  controller_->setDevice(device);
  controller_->setPromptEmbeddingBytes(settings_->promptEmbeddingBytes());
  inspector_->settingsInspector()->setDevice(device);
  vram_->setHostMemory(device == QStringLiteral("cpu"));

  createActions();
  createDocks();
  connectRenderer();

  progress_->setMaximumWidth(220);
  progress_->setTextVisible(false);
  progress_->setVisible(false);
  progressText_->setVisible(false);
  statusBar()->addPermanentWidget(progressText_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(summary_);

  connect(document_, &SequenceDocument::changed, this, &MainWindow::refreshProblems);
  connect(document_, &SequenceDocument::changed, this, [this] {
    renderState_->documentChanged(document_->sequence());
    updatePolicyBox();
    updateRenderActions();
  });
  connect(document_, &SequenceDocument::replaced, this, [this] {
    renderState_->clear();
    updateRenderFolders();  // what a reopened project's render folder holds shows at once
    pendingProblem_.clear();
    setSelectedShot(-1);
    // Nothing of the previous project stays on screen: its banner, and the frame the viewer showed of it.
    banner_->hide();
    preview_->showFrameAt(0);
  });
  connect(document_, &SequenceDocument::filePathChanged, this, &MainWindow::updateTitle);
  connect(document_, &SequenceDocument::filePathChanged, this, &MainWindow::updateRenderFolders);
  connect(renderState_, &RenderState::cutsChanged, this, [this] { cutModel_->setRows(renderState_->cutRows()); });
  connect(document_->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
  connect(shotModel_, &ShotTableModel::editRejected, this, &MainWindow::reportRefusal);
  connect(timeline_, &TimelineView::statusMessage, this, &MainWindow::reportRefusal);
  connect(inspector_->settingsInspector(), &SettingsInspector::pendingProblemChanged, this,
          [this](const QString& problem) {
            pendingProblem_ = problem;
            refreshProblems();
          });
  connect(timeline_, &TimelineView::selectionChanged, this, &MainWindow::setSelectedShot);
  connect(timeline_, &TimelineView::playheadMoved, preview_, &PreviewPanel::showFrameAt);
  connect(preview_, &PreviewPanel::playheadRequested, timeline_, &TimelineView::setPlayhead);
  connect(preview_, &PreviewPanel::loopChanged, timeline_, &TimelineView::setLoopRange);
  connect(shotView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { timeline_->setSelectedIndex(current.isValid() ? current.row() : -1); });
  connect(inspector_->settingsInspector(), &SettingsInspector::deviceChanged, this, [this](const QString& d) {
    controller_->setDevice(d.trimmed());
    settings_->setDevice(d.trimmed());
    vram_->setHostMemory(d.trimmed() == QStringLiteral("cpu"));
    deviceLabel_->setText(tr("  %1 · %2  ").arg(d.trimmed(), deviceDescription_));
    prompts_->schedule();
  });
  connect(prompts_, &PromptPrecomputer::statusMessage, this, [this](const QString& message) {
    statusBar()->showMessage(message, 8000);
    log(message);
  });

  memoryTimer_->setInterval(100);
  connect(memoryTimer_, &QTimer::timeout, this, [this] {
    if (auto sample = controller_->sampleMemory()) vram_->addSample(*sample);
  });
  memoryTimer_->start();

  resize(1480, 920);
  if (const QScreen* screen = QGuiApplication::primaryScreen()) resize(sizeFor(screen->availableGeometry().size()));
  defaultState_ = saveState();
  if (!settings_->windowGeometry().isEmpty()) restoreGeometry(settings_->windowGeometry());
  if (!settings_->windowState().isEmpty()) {
    restoreState(settings_->windowState());
  } else {
    // Dock sizes only take once the window is laid out.
    QTimer::singleShot(0, this, [this] {
      auto* inspector = findChild<QDockWidget*>(QStringLiteral("InspectorDock"));
      auto* memory = findChild<QDockWidget*>(QStringLiteral("VramDock"));
      auto* timeline = findChild<QDockWidget*>(QStringLiteral("TimelineDock"));
      auto* problems = findChild<QDockWidget*>(QStringLiteral("ProblemsDock"));
      resizeDocks({inspector, memory}, {height() * 58 / 100, height() * 30 / 100}, Qt::Vertical);
      resizeDocks({inspector}, {480}, Qt::Horizontal);
      resizeDocks({timeline, problems}, {200, 100}, Qt::Vertical);
    });
  }
  newDocument();
}

MainWindow::~MainWindow() { delete settings_; }

void MainWindow::setAdvancedFigures(bool on) {
  settings_->setAdvancedFigures(on);
  if (advancedAction_ && advancedAction_->isChecked() != on) advancedAction_->setChecked(on);
  vram_->setAdvanced(on);
  inspector_->settingsInspector()->setAdvanced(on);
  timeline_->setAdvanced(on);
  for (int column = CutTableModel::kFirstAdvancedColumn; column < CutTableModel::ColumnCount; ++column)
    cutView_->setColumnHidden(column, !on);
}

void MainWindow::createDocks() {
  auto dock = [this](const QString& title, const QString& name, QWidget* widget, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);
    d->setWidget(widget);
    addDockWidget(area, d);
    viewMenu_->addAction(d->toggleViewAction());
    return d;
  };
  viewMenu_->addSeparator();
  QList<QAction*> stripActions = shotActions_;
  auto* timelinePanel = new TimelinePanel(timeline_, stripActions, this);
  QDockWidget* timelineDock =
      dock(tr("Timeline"), QStringLiteral("TimelineDock"), timelinePanel, Qt::BottomDockWidgetArea);
  QDockWidget* inspectorDock =
      dock(tr("Inspector"), QStringLiteral("InspectorDock"), inspector_, Qt::RightDockWidgetArea);
  QDockWidget* vramDock = dock(tr("Memory"), QStringLiteral("VramDock"), vram_, Qt::RightDockWidgetArea);
  auto* cutView = new QTableView(this);
  cutView_ = cutView;
  cutView->setModel(cutModel_);
  // Sized to the rows whenever they change (a re-render resets the model): no column collapses.
  cutView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  cutView->horizontalHeader()->setMinimumSectionSize(48);
  connect(cutModel_, &QAbstractItemModel::modelReset, cutView, [cutView] { cutView->resizeColumnsToContents(); });
  connect(cutModel_, &QAbstractItemModel::dataChanged, cutView, [cutView] { cutView->resizeColumnsToContents(); });
  cutView->verticalHeader()->setVisible(false);
  cutView->setAlternatingRowColors(true);
  QDockWidget* cutDock = dock(tr("Cuts"), QStringLiteral("CutDock"), cutView, Qt::RightDockWidgetArea);
  cutView->setObjectName(QStringLiteral("CutTable"));
  cutView->setSelectionBehavior(QAbstractItemView::SelectRows);
  connect(timeline_, &TimelineView::cutActivated, this, [this, cutView, cutDock](int toIndex) {
    const auto& shots = document_->sequence().shots;
    if (toIndex <= 0 || toIndex >= static_cast<int>(shots.size())) return;
    const std::string& id = shots[static_cast<std::size_t>(toIndex)].id;
    const auto& rows = cutModel_->rows();
    for (std::size_t row = 0; row < rows.size(); ++row)
      if (rows[row].cut.toShotId == id) {
        cutDock->raise();
        cutView->selectRow(static_cast<int>(row));
        return;
      }
  });
  splitDockWidget(inspectorDock, vramDock, Qt::Vertical);
  tabifyDockWidget(vramDock, cutDock);
  tabifyDockWidget(cutDock, createModelDock());
  setAdvancedFigures(settings_->advancedFigures());
  vramDock->raise();

  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  log_->setPlaceholderText(tr("Render events appear here."));
  shotView_->setModel(shotModel_);
  shotView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  shotView_->setSelectionMode(QAbstractItemView::SingleSelection);
  shotView_->horizontalHeader()->setStretchLastSection(true);
  shotView_->verticalHeader()->setDefaultSectionSize(22);
  shotView_->setAlternatingRowColors(true);
  QDockWidget* problemsDock = dock(tr("Problems"), QStringLiteral("ProblemsDock"), problems_, Qt::BottomDockWidgetArea);
  QDockWidget* logDock = dock(tr("Log"), QStringLiteral("LogDock"), log_, Qt::BottomDockWidgetArea);
  QDockWidget* listDock = dock(tr("Shot list"), QStringLiteral("ShotListDock"), shotView_, Qt::BottomDockWidgetArea);
  splitDockWidget(timelineDock, problemsDock, Qt::Vertical);
  tabifyDockWidget(problemsDock, logDock);
  tabifyDockWidget(logDock, listDock);
  problemsDock->raise();
  timelineDock->raise();
  resizeDocks({timelineDock, problemsDock}, {190, 110}, Qt::Vertical);
  resizeDocks({inspectorDock, vramDock}, {520, 330}, Qt::Vertical);
  resizeDocks({inspectorDock}, {400}, Qt::Horizontal);
}

QString MainWindow::shotLabel(int index) const {
  const auto& shots = document_->sequence().shots;
  if (index < 0 || index >= static_cast<int>(shots.size())) return tr("Shot %1").arg(index + 1);
  const Shot& shot = shots[static_cast<std::size_t>(index)];
  return QString::fromStdString(shot.displayName());
}

void MainWindow::log(const QString& line) {
  log_->appendPlainText(QTime::currentTime().toString(QStringLiteral("HH:mm:ss  ")) + line);
}

void MainWindow::updateTitle() {
  setWindowTitle(tr("%1[*] — ShotChain Studio").arg(document_->displayName()));
  setWindowModified(document_->isModified());
}

void MainWindow::refreshProblems() {
  const Sequence& sequence = document_->sequence();
  // What the movie holds: the frames each enabled shot writes (a shot that continues from the one before leaves
  // out the frames it repeats), as the render resolves them.
  int frames = 0, off = 0;
  for (const resolve::ResolvedShot& shot : document_->resolved().shots)
    shot.enabled ? frames += shot.outputFrames : ++off;
  QString shots = sequence.shots.size() == 1 ? tr("1 shot") : tr("%1 shots").arg(sequence.shots.size());
  if (off > 0) shots += tr(" (%1 off)").arg(off);
  summary_->setText(tr("%1 · %2 frames · %3 s at %4 fps")
                        .arg(shots)
                        .arg(frames)
                        .arg(frames / sequence.settings.fps, 0, 'f', 2)
                        .arg(sequence.settings.fps));
  problems_->clear();
  bool modelFieldError = false;  // then the model set's own problem says the same again
  for (const Diagnostic& d : document_->resolved().problems) {
    auto* item = new QListWidgetItem(QString::fromStdString(d.format()), problems_);
    item->setForeground(d.isError() ? QColor(0xff, 0x6b, 0x6b) : QColor(0xf0, 0xc0, 0x40));
    modelFieldError = modelFieldError || d.path.rfind("model", 0) == 0;
  }
  if (const std::string problem = modelFieldError ? std::string() : modelBrowser_->currentUse().problem;
      !problem.empty()) {
    auto* item = new QListWidgetItem(tr("%1 (see the Models panel)").arg(QString::fromStdString(problem)), problems_);
    item->setForeground(QColor(0xff, 0x6b, 0x6b));
  }
  if (!pendingProblem_.isEmpty()) {
    auto* item = new QListWidgetItem(pendingProblem_, problems_);
    item->setForeground(QColor(0xf0, 0xc0, 0x40));
  }
  if (problems_->count() == 0) new QListWidgetItem(tr("No problems"), problems_);
}

void MainWindow::setSelectedShot(int index) {
  timeline_->setSelectedIndex(index);
  inspector_->showShot(index);
  preview_->setSelectedShot(index);
  if (index >= 0) {
    const QSignalBlocker block(shotView_->selectionModel());
    shotView_->selectRow(index);
  } else {
    shotView_->clearSelection();
  }
}

int MainWindow::currentShot() const { return timeline_->selectedIndex(); }

void MainWindow::reportRefusal(const QString& reason) { statusBar()->showMessage(reason, 8000); }

void MainWindow::addShot() {
  const auto count = static_cast<int>(document_->sequence().shots.size());
  const int at = currentShot() >= 0 ? currentShot() + 1 : count;
  const Shot shot = defaultShotAfter(document_->sequence(), static_cast<std::size_t>(std::max(0, at - 1)));
  const Diagnostics errors = document_->edit(InsertShot{static_cast<std::size_t>(at), shot});
  if (!errors.empty()) return reportRefusal(QString::fromStdString(errors.front().format()));
  setSelectedShot(at);
}

void MainWindow::duplicateShot() {
  const int row = currentShot();
  if (row < 0) return;
  const Diagnostics errors = document_->edit(DuplicateShot{static_cast<std::size_t>(row), {}});
  if (!errors.empty()) return reportRefusal(QString::fromStdString(errors.front().format()));
  setSelectedShot(row + 1);
}

void MainWindow::deleteShot() {
  const int row = currentShot();
  if (row < 0) return;
  document_->edit(RemoveShot{static_cast<std::size_t>(row)});
  setSelectedShot(std::min(row, static_cast<int>(document_->sequence().shots.size()) - 1));
}

void MainWindow::splitAtPlayhead() {
  if (const auto index = shotAtFrame(document_->sequence(), timeline_->playhead()))
    timeline_->splitShot(static_cast<int>(*index));
}

void MainWindow::toggleShotEnabled() {
  const int row = currentShot();
  if (row < 0) return;
  Shot shot = document_->sequence().shots[static_cast<std::size_t>(row)];
  shot.enabled = !shot.enabled;
  const Diagnostics errors = document_->edit(SetShot{static_cast<std::size_t>(row), shot});
  if (!errors.empty()) reportRefusal(QString::fromStdString(errors.front().format()));
}

void MainWindow::moveShot(int delta) {
  const int row = currentShot();
  const auto count = static_cast<int>(document_->sequence().shots.size());
  const int target = row + delta;
  if (row < 0 || target < 0 || target >= count) return;
  document_->edit(MoveShot{static_cast<std::size_t>(row), static_cast<std::size_t>(target)});
  setSelectedShot(target);
}

}  // namespace shotchain::ui
