#include "main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>

#include "document/sequence_document.h"
#include "sequence/sequence_io.h"
#include "sequence/validation.h"
#include "shots/shot_table_model.h"
#include "util/atomic_file.h"

namespace shotchain::ui {
namespace {

const char* const kFileFilter = "ShotChain sequences (*.json);;All files (*)";

Shot defaultShot(const Sequence& sequence) {
  Shot shot;
  if (!sequence.shots.empty()) {
    const Shot& last = sequence.shots.back();
    shot.width = last.width;
    shot.height = last.height;
    shot.frames = last.frames;
    shot.continuity.mode = ContinuityMode::Latent;
    shot.continuity.tag = last.continuity.tag;
  }
  shot.id = sequence.unusedShotId();
  shot.name = "Shot " + std::to_string(sequence.shots.size() + 1);
  return shot;
}

}  // namespace

MainWindow::MainWindow(const QString& deviceDescription, QWidget* parent)
    : QMainWindow(parent),
      document_(new SequenceDocument(this)),
      shotModel_(new ShotTableModel(document_, this)),
      shotView_(new QTableView(this)),
      problems_(new QListWidget(this)),
      summary_(new QLabel(this)) {
  setObjectName(QStringLiteral("MainWindow"));
  shotView_->setModel(shotModel_);
  shotView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  shotView_->setSelectionMode(QAbstractItemView::SingleSelection);
  shotView_->horizontalHeader()->setStretchLastSection(true);
  shotView_->setAlternatingRowColors(true);
  setCentralWidget(shotView_);

  auto* problemsDock = new QDockWidget(tr("Problems"), this);
  problemsDock->setObjectName(QStringLiteral("ProblemsDock"));
  problemsDock->setWidget(problems_);
  addDockWidget(Qt::BottomDockWidgetArea, problemsDock);
  resizeDocks({problemsDock}, {120}, Qt::Vertical);

  statusBar()->addPermanentWidget(summary_);
  statusBar()->addPermanentWidget(new QLabel(tr("Device: %1").arg(deviceDescription), this));
  createActions();

  connect(document_, &SequenceDocument::changed, this, &MainWindow::refreshProblems);
  connect(document_, &SequenceDocument::filePathChanged, this, &MainWindow::updateTitle);
  connect(document_->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
  connect(shotModel_, &ShotTableModel::editRejected, this, &MainWindow::reportRefusal);
  resize(1100, 640);
  newDocument();
}

void MainWindow::createActions() {
  QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
  QMenu* editMenu = menuBar()->addMenu(tr("&Edit"));
  QMenu* shotMenu = menuBar()->addMenu(tr("&Shot"));
  QToolBar* toolbar = addToolBar(tr("Main"));
  toolbar->setObjectName(QStringLiteral("MainToolbar"));

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
  toolbar->addAction(add(fileMenu, tr("&Save"), QKeySequence::Save, [this] { save(); }));
  add(fileMenu, tr("Save &As…"), QKeySequence::SaveAs, [this] { saveAs(); });
  fileMenu->addSeparator();
  add(fileMenu, tr("&Quit"), QKeySequence::Quit, [this] { close(); });

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

  toolbar->addAction(add(shotMenu, tr("&Add Shot"), QKeySequence(Qt::CTRL | Qt::Key_T), [this] { addShot(); }));
  toolbar->addAction(add(shotMenu, tr("D&uplicate Shot"), QKeySequence(Qt::CTRL | Qt::Key_D), [this] {
    duplicateShot();
  }));
  toolbar->addAction(add(shotMenu, tr("&Delete Shot"), QKeySequence::Delete, [this] { deleteShot(); }));
  add(shotMenu, tr("Move &Earlier"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Left), [this] { moveShot(-1); });
  add(shotMenu, tr("Move &Later"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Right), [this] { moveShot(1); });
}

void MainWindow::newDocument() {
  Sequence sequence;
  sequence.settings.model.builtin = "demo";
  document_->reset(std::move(sequence), QString());
  updateTitle();
}

bool MainWindow::openFile(const QString& path) {
  const LoadResult result = loadSequenceFile(path.toStdString());
  if (!result.ok()) {
    QMessageBox box(QMessageBox::Warning, tr("Cannot open sequence"),
                    tr("%1 has problems and was not opened; the file was not changed.").arg(path),
                    QMessageBox::Ok, this);
    box.setDetailedText(QString::fromStdString(formatAll(result.diagnostics, path.toStdString())));
    if (!qEnvironmentVariableIsSet("SHOTCHAIN_NO_DIALOGS")) box.exec();
    statusBar()->showMessage(QString::fromStdString(result.diagnostics.front().format(path.toStdString())));
    return false;
  }
  document_->reset(*result.sequence, path);
  updateTitle();
  statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
  return true;
}

void MainWindow::openWithDialog() {
  if (!confirmDiscard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open sequence"), QString(), tr(kFileFilter));
  if (!path.isEmpty()) openFile(path);
}

bool MainWindow::save() {
  if (document_->filePath().isEmpty()) return saveAs();
  try {
    document_->saveAs(document_->filePath());
  } catch (const FileWriteError& error) {
    QMessageBox::critical(this, tr("Save failed"), QString::fromUtf8(error.what()));
    return false;
  }
  statusBar()->showMessage(tr("Saved %1").arg(document_->filePath()), 5000);
  return true;
}

bool MainWindow::saveAs() {
  QString path = QFileDialog::getSaveFileName(this, tr("Save sequence"), document_->filePath(), tr(kFileFilter));
  if (path.isEmpty()) return false;
  if (!path.endsWith(QStringLiteral(".json"))) path += QStringLiteral(".json");
  try {
    document_->saveAs(path);
  } catch (const FileWriteError& error) {
    QMessageBox::critical(this, tr("Save failed"), QString::fromUtf8(error.what()));
    return false;
  }
  return true;
}

bool MainWindow::confirmDiscard() {
  if (!document_->isModified()) return true;
  const auto answer = QMessageBox::warning(this, tr("Unsaved changes"),
                                           tr("%1 has unsaved changes.").arg(document_->displayName()),
                                           QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (confirmDiscard()) event->accept();
  else event->ignore();
}

void MainWindow::updateTitle() {
  setWindowTitle(tr("%1[*] — ShotChain Studio").arg(document_->displayName()));
  setWindowModified(document_->isModified());
}

void MainWindow::refreshProblems() {
  const Sequence& sequence = document_->sequence();
  const QString shots = sequence.shots.size() == 1 ? tr("1 shot") : tr("%1 shots").arg(sequence.shots.size());
  summary_->setText(tr("%1, %2 frames, %3 s at %4 fps")
                        .arg(shots)
                        .arg(sequence.totalFrames())
                        .arg(sequence.totalFrames() / sequence.settings.fps, 0, 'f', 2)
                        .arg(sequence.settings.fps));
  problems_->clear();
  ValidationContext context;
  if (!document_->filePath().isEmpty())
    context.baseFolder = std::filesystem::path(document_->filePath().toStdString()).parent_path();
  for (const Diagnostic& d : validateSequence(document_->sequence(), context)) {
    auto* item = new QListWidgetItem(QString::fromStdString(d.format()), problems_);
    item->setForeground(d.isError() ? QColor(0xff, 0x6b, 0x6b) : QColor(0xf0, 0xc0, 0x40));
  }
  if (problems_->count() == 0) new QListWidgetItem(tr("No problems"), problems_);
}

std::size_t MainWindow::currentRow() const {
  const QModelIndex index = shotView_->currentIndex();
  return index.isValid() ? static_cast<std::size_t>(index.row()) : document_->sequence().shots.size();
}

void MainWindow::reportRefusal(const QString& reason) { statusBar()->showMessage(reason, 8000); }

void MainWindow::addShot() {
  const std::size_t count = document_->sequence().shots.size();
  const std::size_t at = currentRow() < count ? currentRow() + 1 : count;
  const Diagnostics errors = document_->edit(InsertShot{at, defaultShot(document_->sequence())});
  if (!errors.empty()) return reportRefusal(QString::fromStdString(errors.front().format()));
  shotView_->selectRow(static_cast<int>(at));
}

void MainWindow::duplicateShot() {
  const std::size_t row = currentRow();
  if (row >= document_->sequence().shots.size()) return;
  const Diagnostics errors = document_->edit(DuplicateShot{row, {}});
  if (!errors.empty()) return reportRefusal(QString::fromStdString(errors.front().format()));
  shotView_->selectRow(static_cast<int>(row + 1));
}

void MainWindow::deleteShot() {
  const std::size_t row = currentRow();
  if (row >= document_->sequence().shots.size()) return;
  document_->edit(RemoveShot{row});
}

void MainWindow::moveShot(int delta) {
  const std::size_t row = currentRow();
  const auto count = static_cast<long>(document_->sequence().shots.size());
  const long target = static_cast<long>(row) + delta;
  if (row >= static_cast<std::size_t>(count) || target < 0 || target >= count) return;
  document_->edit(MoveShot{row, static_cast<std::size_t>(target)});
  shotView_->selectRow(static_cast<int>(target));
}

}  // namespace shotchain::ui
