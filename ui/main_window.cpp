#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScreen>
#include <QStatusBar>
#include <QTableView>
#include <QTime>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

#include "document/autosave.h"
#include "document/sequence_document.h"
#include "inspector/inspector_panel.h"
#include "inspector/settings_inspector.h"
#include "monitor/cut_table_model.h"
#include "monitor/vram_panel.h"
#include "preview/preview_panel.h"
#include "render/render_state.h"
#include "sequence/sequence_io.h"
#include "sequence/validation.h"
#include "shots/shot_table_model.h"
#include "studio_settings.h"
#include "timeline/timeline_panel.h"
#include "timeline/timeline_view.h"
#include "util/atomic_file.h"
#include "widgets/message_banner.h"

namespace shotchain::ui {
namespace {

const char* const kFileFilter = "ShotChain sequences (*.json);;All files (*)";
const ResidencyPolicy kPolicies[] = {ResidencyPolicy::Auto, ResidencyPolicy::Pinned, ResidencyPolicy::Offload,
                                     ResidencyPolicy::Reload};

QSize sizeFor(const QSize& available) {
  return {std::min(1600, available.width() * 96 / 100), std::min(1000, available.height() * 94 / 100)};
}

bool dialogsAllowed() { return !qEnvironmentVariableIsSet("SHOTCHAIN_NO_DIALOGS"); }

Shot defaultShot(const Sequence& sequence, std::size_t after) {
  Shot shot;
  if (!sequence.shots.empty()) {
    const Shot& previous = sequence.shots[std::min(after, sequence.shots.size() - 1)];
    shot.width = previous.width;
    shot.height = previous.height;
    shot.frames = previous.frames;
    shot.prompt = previous.prompt;
    shot.continuity.mode = ContinuityMode::Latent;
    shot.continuity.tag = previous.continuity.tag;
  } else if (sequence.settings.model.isBuiltin()) {
    shot.width = 64;  // the demo model's size
    shot.height = 64;
  }
  shot.id = sequence.unusedShotId();
  shot.name = "Shot " + std::to_string(sequence.shots.size() + 1);
  return shot;
}

QString eta(double seconds) {
  if (seconds < 0) return QObject::tr("estimating…");
  const int s = static_cast<int>(seconds + 0.5);
  return s >= 3600 ? QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'))
                   : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString sequencePathFrom(const QMimeData* mime) {
  if (mime == nullptr || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls())
    if (url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) return url.toLocalFile();
  return {};
}

}  // namespace

MainWindow::MainWindow(const QString& deviceDescription, QWidget* parent, RenderController::OptionsHook renderHook)
    : QMainWindow(parent),
      settings_(new StudioSettings),
      document_(new SequenceDocument(this)),
      renderState_(new RenderState(this)),
      controller_(new RenderController(std::move(renderHook), this)),
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
  if (device.isEmpty()) device = deviceDescription.contains(QStringLiteral("CPU")) ? QStringLiteral("cpu") : QStringLiteral("cuda");
  controller_->setDevice(device);
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
    cutModel_->clear();
    setSelectedShot(-1);
  });
  connect(document_, &SequenceDocument::filePathChanged, this, &MainWindow::updateTitle);
  connect(document_->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
  connect(shotModel_, &ShotTableModel::editRejected, this, &MainWindow::reportRefusal);
  connect(timeline_, &TimelineView::statusMessage, this, &MainWindow::reportRefusal);
  connect(timeline_, &TimelineView::selectionChanged, this, &MainWindow::setSelectedShot);
  connect(timeline_, &TimelineView::playheadMoved, preview_, &PreviewPanel::showFrameAt);
  connect(preview_, &PreviewPanel::playheadRequested, timeline_, &TimelineView::setPlayhead);
  connect(shotView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { timeline_->setSelectedIndex(current.isValid() ? current.row() : -1); });
  connect(inspector_->settingsInspector(), &SettingsInspector::deviceChanged, this, [this](const QString& d) {
    controller_->setDevice(d.trimmed());
    settings_->setDevice(d.trimmed());
    vram_->setHostMemory(d.trimmed() == QStringLiteral("cpu"));
    deviceLabel_->setText(tr("  %1 · %2  ").arg(d.trimmed(), deviceDescription_));
  });

  memoryTimer_->setInterval(100);
  connect(memoryTimer_, &QTimer::timeout, this, [this] {
    if (auto sample = controller_->sampleMemory()) vram_->addSample(*sample);
  });
  memoryTimer_->start();

  resize(1480, 920);
  if (const QScreen* screen = QGuiApplication::primaryScreen())
    resize(sizeFor(screen->availableGeometry().size()));
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
  QDockWidget* timelineDock = dock(tr("Timeline"), QStringLiteral("TimelineDock"), timelinePanel, Qt::BottomDockWidgetArea);
  QDockWidget* inspectorDock = dock(tr("Inspector"), QStringLiteral("InspectorDock"), inspector_, Qt::RightDockWidgetArea);
  QDockWidget* vramDock = dock(tr("Memory"), QStringLiteral("VramDock"), vram_, Qt::RightDockWidgetArea);
  auto* cutView = new QTableView(this);
  cutView->setModel(cutModel_);
  cutView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  cutView->verticalHeader()->setVisible(false);
  cutView->setAlternatingRowColors(true);
  QDockWidget* cutDock = dock(tr("Cuts"), QStringLiteral("CutDock"), cutView, Qt::RightDockWidgetArea);
  splitDockWidget(inspectorDock, vramDock, Qt::Vertical);
  tabifyDockWidget(vramDock, cutDock);
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

void MainWindow::createActions() {
  QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
  QMenu* editMenu = menuBar()->addMenu(tr("&Edit"));
  QMenu* shotMenu = menuBar()->addMenu(tr("&Shot"));
  QMenu* renderMenu = menuBar()->addMenu(tr("&Render"));
  viewMenu_ = menuBar()->addMenu(tr("&View"));
  QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
  QToolBar* toolbar = addToolBar(tr("Main"));
  toolbar->setObjectName(QStringLiteral("MainToolbar"));
  toolbar->setMovable(false);
  toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);

  auto add = [this](QMenu* menu, const QString& text, const QKeySequence& shortcut, auto slot) {
    QAction* action = menu->addAction(text);
    action->setShortcut(shortcut);
    connect(action, &QAction::triggered, this, slot);
    return action;
  };
  toolbar->addAction(add(fileMenu, tr("&New"), QKeySequence::New, [this] {
    if (confirmDiscard()) newDocument();
  }));
  toolbar->addAction(add(fileMenu, tr("&Open…"), QKeySequence::Open, [this] { openWithDialog(); }));
  recentMenu_ = fileMenu->addMenu(tr("Open &Recent"));
  toolbar->addAction(add(fileMenu, tr("&Save"), QKeySequence::Save, [this] { save(); }));
  add(fileMenu, tr("Save &As…"), QKeySequence::SaveAs, [this] { saveAs(); });
  fileMenu->addSeparator();
  add(fileMenu, tr("&Quit"), QKeySequence::Quit, [this] { close(); });
  updateRecentMenu();

  QAction* undo = document_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = document_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  editMenu->addAction(undo);
  editMenu->addAction(redo);
  toolbar->addSeparator();
  toolbar->addAction(undo);
  toolbar->addAction(redo);
  toolbar->addSeparator();

  QAction* addShotAction = add(shotMenu, tr("&Add Shot"), QKeySequence(Qt::CTRL | Qt::Key_T), [this] { addShot(); });
  QAction* duplicate = add(shotMenu, tr("D&uplicate"), QKeySequence(Qt::CTRL | Qt::Key_D), [this] { duplicateShot(); });
  QAction* split = add(shotMenu, tr("S&plit at Playhead"), QKeySequence(Qt::CTRL | Qt::Key_K), [this] {
    timeline_->splitShot(currentShot());
  });
  QAction* remove = add(shotMenu, tr("&Delete"), QKeySequence::Delete, [this] { deleteShot(); });
  shotMenu->addSeparator();
  QAction* shorter = add(shotMenu, tr("Shorten by 4 Frames"), QKeySequence(Qt::SHIFT | Qt::Key_Left), [this] {
    timeline_->nudgeLength(currentShot(), -4);
  });
  QAction* longer = add(shotMenu, tr("Lengthen by 4 Frames"), QKeySequence(Qt::SHIFT | Qt::Key_Right), [this] {
    timeline_->nudgeLength(currentShot(), 4);
  });
  // The timeline handles these keys itself when it has focus; elsewhere the menu does.
  shorter->setShortcutContext(Qt::WidgetShortcut);
  longer->setShortcutContext(Qt::WidgetShortcut);
  add(shotMenu, tr("Move &Earlier"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Left), [this] { moveShot(-1); });
  add(shotMenu, tr("Move &Later"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Right), [this] { moveShot(1); });
  QAction* fit = add(viewMenu_, tr("Zoom to &Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), [this] { timeline_->zoomToFit(); });
  add(viewMenu_, tr("Zoom &In"), QKeySequence::ZoomIn, [this] {
    timeline_->setPixelsPerFrame(timeline_->pixelsPerFrame() * 1.25, timeline_->width() / 2);
  });
  add(viewMenu_, tr("Zoom &Out"), QKeySequence::ZoomOut, [this] {
    timeline_->setPixelsPerFrame(timeline_->pixelsPerFrame() / 1.25, timeline_->width() / 2);
  });
  viewMenu_->addSeparator();
  add(viewMenu_, tr("&Play / Pause"), QKeySequence(Qt::Key_Space), [this] { preview_->togglePlay(); });
  add(viewMenu_, tr("Previous Frame"), QKeySequence(Qt::Key_Comma), [this] { preview_->stepFrame(-1); });
  add(viewMenu_, tr("Next Frame"), QKeySequence(Qt::Key_Period), [this] { preview_->stepFrame(1); });
  viewMenu_->addSeparator();
  add(viewMenu_, tr("Reset &Layout"), QKeySequence(), [this] { restoreState(defaultState_); });
  shotActions_ = {addShotAction, duplicate, split, remove, nullptr, fit};

  renderAction_ = add(renderMenu, tr("&Render Sequence"), QKeySequence(Qt::CTRL | Qt::Key_R), [this] { renderSequence(); });
  renderAction_->setToolTip(tr("Render every shot that changed since the last render (Ctrl+R)"));
  stopNowAction_ = add(renderMenu, tr("Stop &Now"), QKeySequence(Qt::CTRL | Qt::Key_Period), [this] {
    controller_->stop(render::StopRequest::Now);
    log(tr("Stopping now…"));
  });
  stopAfterAction_ = add(renderMenu, tr("Stop &After This Shot"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period), [this] {
    controller_->stop(render::StopRequest::AfterShot);
    log(tr("Will stop once this shot is written."));
  });
  renderMenu->addSeparator();
  add(renderMenu, tr("Open Output &Folder"), QKeySequence(), [this] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(RenderController::outputDirectoryFor(document_->filePath())));
  });
  add(helpMenu, tr("&About ShotChain Studio"), QKeySequence(), [this] {
    QMessageBox::about(this, tr("About ShotChain Studio"),
                       tr("<b>ShotChain Studio %1</b><br>Renders a sequence of AI video shots with one model kept "
                          "loaded, handing each shot's last latent frame to the next.")
                           .arg(QApplication::applicationVersion()));
  });

  toolbar->addSeparator();
  toolbar->addAction(renderAction_);
  if (QWidget* button = toolbar->widgetForAction(renderAction_)) button->setObjectName(QStringLiteral("RenderButton"));
  auto* stopButton = new QToolButton(this);
  stopButton->setText(tr("Stop"));
  stopButton->setToolTip(tr("Stop now (click) or after this shot (menu)"));
  auto* stopMenu = new QMenu(stopButton);
  stopMenu->addAction(stopNowAction_);
  stopMenu->addAction(stopAfterAction_);
  stopButton->setMenu(stopMenu);
  stopButton->setPopupMode(QToolButton::MenuButtonPopup);
  connect(stopButton, &QToolButton::clicked, stopNowAction_, &QAction::trigger);
  connect(stopNowAction_, &QAction::changed, stopButton, [this, stopButton] { stopButton->setEnabled(stopNowAction_->isEnabled()); });
  toolbar->addWidget(stopButton);
  toolbar->addSeparator();
  toolbar->addWidget(new QLabel(tr(" Memory policy "), this));
  for (ResidencyPolicy p : kPolicies) policy_->addItem(QString::fromLatin1(toString(p)));
  policy_->setToolTip(tr("How the model stays on the device between shots: pinned (fastest), offload, reload, "
                         "or auto (the renderer picks the fastest that fits and says why)"));
  connect(policy_, &QComboBox::activated, this, [this](int row) {
    SequenceSettings settings = document_->sequence().settings;
    if (settings.policy == kPolicies[row]) return;
    settings.policy = kPolicies[row];
    const Diagnostics errors = document_->edit(SetSettings{settings});
    if (!errors.empty()) reportRefusal(QString::fromStdString(errors.front().format()));
  });
  toolbar->addWidget(policy_);
  auto* spacer = new QWidget(this);
  spacer->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  toolbar->addWidget(spacer);
  deviceLabel_->setObjectName(QStringLiteral("DeviceLabel"));
  deviceLabel_->setText(tr("  %1 · %2  ").arg(controller_->device(), deviceDescription_));
  deviceLabel_->setToolTip(tr("The render device; change it in the sequence settings (click empty timeline space)"));
  toolbar->addWidget(deviceLabel_);
  updateRenderActions();
}

void MainWindow::connectRenderer() {
  RenderController* c = controller_;
  connect(c, &RenderController::renderingChanged, this, &MainWindow::updateRenderActions);
  connect(c, &RenderController::planReady, this, [this](const MemoryPlan& plan) {
    vram_->setPlan(plan);
    log(tr("Plan: %1 — %2").arg(QString::fromLatin1(toString(plan.chosen)), QString::fromStdString(plan.reason)));
  });
  connect(c, &RenderController::shotStarted, this, [this](const render::ShotStarted& shot) {
    renderState_->shotStarted(shot);
    log(shot.reused ? tr("Shot %1/%2 %3: unchanged, reusing what is on disk").arg(shot.index + 1).arg(shot.count).arg(QString::fromStdString(shot.name))
                    : tr("Shot %1/%2 %3: %4 frames, %5 steps").arg(shot.index + 1).arg(shot.count).arg(QString::fromStdString(shot.name)).arg(shot.frames).arg(shot.steps));
  });
  connect(c, &RenderController::stepDone, this, [this](int shot, int step, int steps, const QImage& image) {
    renderState_->stepDone(shot, step, steps);
    if (!image.isNull()) {
      preview_->showLive(image, tr("%1 · step %2/%3 · latent preview").arg(shotLabel(shot)).arg(step).arg(steps));
      controller_->previewShown();
    }
  });
  connect(c, &RenderController::progress, this, [this](int shot, int count, int step, int steps, double seconds) {
    progress_->setRange(0, std::max(1, count * std::max(1, steps)));
    progress_->setValue(shot * std::max(1, steps) + step);
    progressText_->setText(tr("Shot %1/%2 · step %3/%4 · ETA %5").arg(shot + 1).arg(count).arg(step).arg(steps).arg(eta(seconds)));
  });
  connect(c, &RenderController::framesDecoded, this, [this](int shot, int first, int total, const QVector<QImage>& frames) {
    renderState_->framesDecoded(shot, first, total, frames);
    if (!frames.isEmpty())
      preview_->showLive(frames.back(), tr("%1 · decoded %2/%3").arg(shotLabel(shot)).arg(first + frames.size()).arg(total));
  });
  connect(c, &RenderController::cutMeasured, this, [this](const continuity::CutMetrics& cut) {
    renderState_->cutMeasured(cut);
    cutModel_->addCut(cut);
    log(tr("Cut %1 → %2: MAD ratio %3").arg(QString::fromStdString(cut.fromShotId), QString::fromStdString(cut.toShotId))
            .arg(cut.madRatio ? QString::number(*cut.madRatio, 'f', 2) : QStringLiteral("—")));
  });
  connect(c, &RenderController::memorySampled, vram_, &VramPanel::addCutSample);
  connect(c, &RenderController::shotFinished, this, [this](const render::ShotFinished& shot) {
    renderState_->shotFinished(shot);
    if (!shot.reused)
      log(tr("Shot %1 done: %2 frames in %3 s (sampling %4 s, decoding %5 s)")
              .arg(QString::fromStdString(shot.id)).arg(shot.framesWritten).arg(shot.seconds, 0, 'f', 1)
              .arg(shot.sampleSeconds, 0, 'f', 1).arg(shot.decodeSeconds, 0, 'f', 1));
  });
  connect(c, &RenderController::warning, this, [this](const render::RenderWarning& w) {
    log(tr("Warning (%1): %2").arg(QString::fromStdString(w.kind), QString::fromStdString(w.message)));
    if (!banner_->isVisible() || banner_->kind() != MessageBanner::Kind::Error)
      banner_->showMessage(MessageBanner::Kind::Warning, QString::fromStdString(w.message));
  });
  connect(c, &RenderController::failed, this, [this](int shot, const QString& message, const QString& details) {
    renderState_->shotFailed(shot);
    const QString where = shot >= 0 ? tr("Shot %1 failed").arg(shotLabel(shot)) : tr("The render could not start");
    log(tr("Error: %1: %2").arg(where, message));
    banner_->showMessage(MessageBanner::Kind::Error, tr("<b>%1:</b> %2").arg(where, message.toHtmlEscaped()),
                         details.isEmpty() ? message : message + QLatin1Char('\n') + details);
  });
  connect(c, &RenderController::finished, this, &MainWindow::renderFinished);
}

QString MainWindow::shotLabel(int index) const {
  const auto& shots = document_->sequence().shots;
  if (index < 0 || index >= static_cast<int>(shots.size())) return tr("Shot %1").arg(index + 1);
  const Shot& shot = shots[static_cast<std::size_t>(index)];
  return QString::fromStdString(shot.name.empty() ? shot.id : shot.name);
}

bool MainWindow::renderSequence() {
  if (controller_->isRendering()) return false;
  const Diagnostics problems = validateSequence(document_->sequence(), document_->validationContext());
  if (hasErrors(problems)) {
    banner_->showMessage(MessageBanner::Kind::Error, tr("<b>The sequence has problems;</b> fix them to render (see Problems)."),
                         QString::fromStdString(formatAll(problems, document_->displayName().toStdString())));
    return false;
  }
  if (document_->sequence().shots.empty()) {
    banner_->showMessage(MessageBanner::Kind::Warning, tr("There is nothing to render yet: add a shot first."));
    return false;
  }
  banner_->hide();
  vram_->clearRun();
  cutModel_->clear();
  renderState_->renderStarted(document_->sequence());
  preview_->setLive(true);
  progress_->setValue(0);
  progressText_->setText(tr("Starting…"));
  controller_->start(document_->sequence(), document_->filePath());
  log(tr("Render started → %1").arg(QDir::toNativeSeparators(controller_->outputDirectory())));
  return true;
}

void MainWindow::renderFinished(const render::SequenceFinished& result, bool failed) {
  renderState_->renderFinished();
  preview_->setLive(false);
  if (failed) return;  // the banner already shows the error
  const QString folder = controller_->outputDirectory();
  if (result.cancelled) {
    banner_->showMessage(MessageBanner::Kind::Warning,
                         tr("Render stopped after %1 shot(s). Render again to continue: finished shots are kept.")
                             .arg(result.shotsRendered + result.shotsReused));
    log(tr("Render stopped."));
    return;
  }
  QList<QAction*> actions;
  auto* openFolder = new QAction(tr("Open folder"), banner_);
  connect(openFolder, &QAction::triggered, this, [folder] { QDesktopServices::openUrl(QUrl::fromLocalFile(folder)); });
  actions << openFolder;
  const QStringList movies = QDir(folder).entryList({QStringLiteral("*.mp4")}, QDir::Files, QDir::Time);
  if (!movies.isEmpty()) {
    auto* play = new QAction(tr("Play %1").arg(movies.front()), banner_);
    const QString movie = QDir(folder).filePath(movies.front());
    connect(play, &QAction::triggered, this, [movie] { QDesktopServices::openUrl(QUrl::fromLocalFile(movie)); });
    actions << play;
  }
  const QString text = tr("<b>Rendered.</b> %1 shot(s) rendered, %2 reused, in %3 s → %4")
                           .arg(result.shotsRendered).arg(result.shotsReused).arg(result.seconds, 0, 'f', 1)
                           .arg(QDir::toNativeSeparators(folder).toHtmlEscaped());
  banner_->showMessage(MessageBanner::Kind::Info, text, {}, actions);
  log(tr("Render finished in %1 s.").arg(result.seconds, 0, 'f', 1));
}

void MainWindow::updateRenderActions() {
  const bool rendering = controller_->isRendering();
  renderAction_->setEnabled(!rendering);
  stopNowAction_->setEnabled(rendering);
  stopAfterAction_->setEnabled(rendering);
  progress_->setVisible(rendering);
  progressText_->setVisible(rendering);
  policy_->setEnabled(!rendering);
}

void MainWindow::updatePolicyBox() {
  const ResidencyPolicy policy = document_->sequence().settings.policy;
  const QSignalBlocker block(policy_);
  policy_->setCurrentIndex(static_cast<int>(std::find(std::begin(kPolicies), std::end(kPolicies), policy) - std::begin(kPolicies)));
}

void MainWindow::log(const QString& line) {
  log_->appendPlainText(QTime::currentTime().toString(QStringLiteral("HH:mm:ss  ")) + line);
}

void MainWindow::newDocument() {
  Sequence sequence;
  sequence.settings.model.builtin = "demo";
  document_->reset(std::move(sequence), QString());
  updateTitle();
}

void MainWindow::offerUntitledRecovery() {
  const auto recovery = Autosave::pendingRecovery(QString());
  if (!recovery) return;
  const bool accept = recoveryPrompt_ ? recoveryPrompt_(*recovery)
                                      : dialogsAllowed() &&
                                            QMessageBox::question(this, tr("Recover unsaved work?"),
                                                                  tr("An untitled sequence was not saved when the studio last closed. Recover it?")) ==
                                                QMessageBox::Yes;
  const LoadResult result = loadSequenceFile(recovery->toStdString());
  if (accept && result.ok()) {
    document_->reset(*result.sequence, QString(), true);
    updateTitle();
  } else {
    QFile::remove(*recovery);
  }
}

bool MainWindow::openFile(const QString& path) {
  const LoadResult result = loadSequenceFile(path.toStdString());
  if (!result.ok()) {
    QMessageBox box(QMessageBox::Warning, tr("Cannot open sequence"),
                    tr("%1 has problems and was not opened; the file was not changed.").arg(path), QMessageBox::Ok, this);
    box.setDetailedText(QString::fromStdString(formatAll(result.diagnostics, path.toStdString())));
    if (dialogsAllowed()) box.exec();
    statusBar()->showMessage(QString::fromStdString(result.diagnostics.front().format(path.toStdString())));
    return false;
  }
  Sequence sequence = *result.sequence;
  bool recovered = false;
  if (const auto recovery = Autosave::pendingRecovery(path)) {
    const bool accept = recoveryPrompt_ ? recoveryPrompt_(*recovery)
                                        : dialogsAllowed() &&
                                              QMessageBox::question(this, tr("Recover unsaved changes?"),
                                                                    tr("%1 has changes that were not saved when the studio last closed. "
                                                                       "Recover them?").arg(QFileInfo(path).fileName())) == QMessageBox::Yes;
    const LoadResult backup = loadSequenceFile(recovery->toStdString());
    if (accept && backup.ok()) {
      sequence = *backup.sequence;
      recovered = true;
    } else {
      QFile::remove(*recovery);
    }
  }
  document_->reset(std::move(sequence), path, recovered);
  settings_->addRecentFile(path);
  updateRecentMenu();
  updateTitle();
  statusBar()->showMessage(recovered ? tr("Recovered unsaved changes of %1").arg(path) : tr("Opened %1").arg(path), 5000);
  return true;
}

void MainWindow::openWithDialog() {
  if (!confirmDiscard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open sequence"), QString(), tr(kFileFilter));
  if (!path.isEmpty()) openFile(path);
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  const QStringList files = settings_->recentFiles();
  for (const QString& file : files) {
    QAction* action = recentMenu_->addAction(QFileInfo(file).fileName());
    action->setToolTip(file);
    connect(action, &QAction::triggered, this, [this, file] {
      if (!confirmDiscard()) return;
      if (!QFileInfo::exists(file)) {
        settings_->removeRecentFile(file);
        updateRecentMenu();
        reportRefusal(tr("%1 no longer exists").arg(file));
        return;
      }
      openFile(file);
    });
  }
  recentMenu_->setEnabled(!files.isEmpty());
}

bool MainWindow::saveTo(const QString& path) {
  try {
    document_->saveAs(path);
  } catch (const std::exception& error) {
    if (dialogsAllowed()) QMessageBox::critical(this, tr("Save failed"), QString::fromUtf8(error.what()));
    statusBar()->showMessage(QString::fromUtf8(error.what()));
    return false;
  }
  autosave_->discard();
  settings_->addRecentFile(path);
  updateRecentMenu();
  statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  return true;
}

bool MainWindow::save() {
  if (document_->filePath().isEmpty()) return saveAs();
  return saveTo(document_->filePath());
}

bool MainWindow::saveAs() {
  QString path = QFileDialog::getSaveFileName(this, tr("Save sequence"), document_->filePath(), tr(kFileFilter));
  if (path.isEmpty()) return false;
  if (!path.endsWith(QStringLiteral(".json"))) path += QStringLiteral(".json");
  const QString untitledRecovery = document_->filePath().isEmpty() ? Autosave::recoveryPathFor(QString()) : QString();
  const bool saved = saveTo(path);
  if (saved && !untitledRecovery.isEmpty()) QFile::remove(untitledRecovery);
  return saved;
}

bool MainWindow::confirmDiscard() {
  if (!document_->isModified()) return true;
  if (!dialogsAllowed()) return true;
  const auto answer = QMessageBox::warning(this, tr("Unsaved changes"), tr("%1 has unsaved changes.").arg(document_->displayName()),
                                           QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirmDiscard()) return event->ignore();
  if (controller_->isRendering()) controller_->stop(render::StopRequest::Now);
  settings_->setWindowLayout(saveGeometry(), saveState());
  autosave_->discard();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!sequencePathFrom(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = sequencePathFrom(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  // Open after the drop returns, so a dialog does not run inside the drag's event loop.
  QTimer::singleShot(0, this, [this, path] {
    if (confirmDiscard()) openFile(path);
  });
}

void MainWindow::updateTitle() {
  setWindowTitle(tr("%1[*] — ShotChain Studio").arg(document_->displayName()));
  setWindowModified(document_->isModified());
}

void MainWindow::refreshProblems() {
  const Sequence& sequence = document_->sequence();
  const QString shots = sequence.shots.size() == 1 ? tr("1 shot") : tr("%1 shots").arg(sequence.shots.size());
  summary_->setText(tr("%1 · %2 frames · %3 s at %4 fps")
                        .arg(shots)
                        .arg(sequence.totalFrames())
                        .arg(sequence.totalFrames() / sequence.settings.fps, 0, 'f', 2)
                        .arg(sequence.settings.fps));
  problems_->clear();
  for (const Diagnostic& d : validateSequence(document_->sequence(), document_->validationContext())) {
    auto* item = new QListWidgetItem(QString::fromStdString(d.format()), problems_);
    item->setForeground(d.isError() ? QColor(0xff, 0x6b, 0x6b) : QColor(0xf0, 0xc0, 0x40));
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
  const Diagnostics errors =
      document_->edit(InsertShot{static_cast<std::size_t>(at), defaultShot(document_->sequence(), static_cast<std::size_t>(std::max(0, at - 1)))});
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

void MainWindow::moveShot(int delta) {
  const int row = currentShot();
  const auto count = static_cast<int>(document_->sequence().shots.size());
  const int target = row + delta;
  if (row < 0 || target < 0 || target >= count) return;
  document_->edit(MoveShot{static_cast<std::size_t>(row), static_cast<std::size_t>(target)});
  setSelectedShot(target);
}

}  // namespace shotchain::ui
