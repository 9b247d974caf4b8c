#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDesktopServices>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QUrl>

#include "document/sequence_document.h"
#include "preview/preview_panel.h"
#include "timeline/timeline_view.h"

// The menus, the toolbar and their actions.
namespace shotchain::ui {
namespace {

const ResidencyPolicy kPolicies[] = {ResidencyPolicy::Auto, ResidencyPolicy::Pinned, ResidencyPolicy::Offload,
                                     ResidencyPolicy::Reload};

}  // namespace

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
  add(fileMenu, tr("&Import ComfyUI Workflow…"), QKeySequence(), [this] { importComfyWithDialog(); });
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
  editMenu->addSeparator();
  add(editMenu, tr("&Preferences…"), QKeySequence(Qt::CTRL | Qt::Key_Comma), [this] { showPreferences(); });
  // The toolbar's Undo and Redo keep their width (the step they would undo is in their tooltip), so the buttons
  // after them never move under the pointer.
  toolbar->addSeparator();
  for (const bool isUndo : {true, false}) {
    QUndoStack* stack = document_->undoStack();
    auto* action = new QAction(isUndo ? tr("Undo") : tr("Redo"), this);
    action->setObjectName(isUndo ? QStringLiteral("ToolbarUndo") : QStringLiteral("ToolbarRedo"));
    const auto refresh = [action, stack, isUndo] {
      action->setEnabled(isUndo ? stack->canUndo() : stack->canRedo());
      const QString step = isUndo ? stack->undoText() : stack->redoText();
      action->setToolTip(step.isEmpty() ? action->text() : action->text() + QStringLiteral(": ") + step);
    };
    connect(stack, &QUndoStack::indexChanged, action, refresh);
    connect(stack, &QUndoStack::cleanChanged, action, refresh);
    connect(action, &QAction::triggered, stack, [stack, isUndo] { isUndo ? stack->undo() : stack->redo(); });
    refresh();
    toolbar->addAction(action);
  }
  toolbar->addSeparator();

  QAction* addShotAction = add(shotMenu, tr("&Add Shot"), QKeySequence(Qt::CTRL | Qt::Key_T), [this] { addShot(); });
  QAction* duplicate = add(shotMenu, tr("D&uplicate"), QKeySequence(Qt::CTRL | Qt::Key_D), [this] { duplicateShot(); });
  QAction* split = add(shotMenu, tr("S&plit at Playhead"), QKeySequence(Qt::Key_S), [this] { splitAtPlayhead(); });
  split->setShortcuts({QKeySequence(Qt::Key_S), QKeySequence(Qt::CTRL | Qt::Key_K)});
  QAction* disable =
      add(shotMenu, tr("&Disable / Enable Shot"), QKeySequence(Qt::Key_Delete), [this] { toggleShotEnabled(); });
  disable->setToolTip(tr("The shot keeps its place on the timeline but is not rendered (Delete; again to enable)"));
  QAction* remove =
      add(shotMenu, tr("Ripple &Delete"), QKeySequence(Qt::SHIFT | Qt::Key_Delete), [this] { deleteShot(); });
  remove->setToolTip(tr("Remove the shot; the shots after it move up (Shift+Delete)"));
  shotMenu->addSeparator();
  QAction* shorter = add(shotMenu, tr("Shorten by 4 Frames"), QKeySequence(Qt::SHIFT | Qt::Key_Left),
                         [this] { timeline_->nudgeLength(currentShot(), -4); });
  QAction* longer = add(shotMenu, tr("Lengthen by 4 Frames"), QKeySequence(Qt::SHIFT | Qt::Key_Right),
                        [this] { timeline_->nudgeLength(currentShot(), 4); });
  // The timeline handles these keys itself when it has focus; elsewhere the menu does.
  shorter->setShortcutContext(Qt::WidgetShortcut);
  longer->setShortcutContext(Qt::WidgetShortcut);
  add(shotMenu, tr("Move &Earlier"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Left), [this] { moveShot(-1); });
  add(shotMenu, tr("Move &Later"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Right), [this] { moveShot(1); });
  QAction* fit =
      add(viewMenu_, tr("Zoom to &Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), [this] { timeline_->zoomToFit(); });
  add(viewMenu_, tr("Zoom &In"), QKeySequence::ZoomIn,
      [this] { timeline_->setPixelsPerFrame(timeline_->pixelsPerFrame() * 1.25, timeline_->width() / 2); });
  add(viewMenu_, tr("Zoom &Out"), QKeySequence::ZoomOut,
      [this] { timeline_->setPixelsPerFrame(timeline_->pixelsPerFrame() / 1.25, timeline_->width() / 2); });
  viewMenu_->addSeparator();
  add(viewMenu_, tr("&Play / Pause"), QKeySequence(Qt::Key_Space), [this] { preview_->togglePlay(); });
  add(viewMenu_, tr("Shuttle Backward"), QKeySequence(Qt::Key_J), [this] { preview_->shuttle(-1); });
  add(viewMenu_, tr("Stop"), QKeySequence(Qt::Key_K), [this] { preview_->pause(); });
  add(viewMenu_, tr("Shuttle Forward"), QKeySequence(Qt::Key_L), [this] { preview_->shuttle(1); });
  QAction* previous =
      add(viewMenu_, tr("Previous Frame"), QKeySequence(Qt::Key_Left), [this] { preview_->stepFrame(-1); });
  previous->setShortcuts({QKeySequence(Qt::Key_Left), QKeySequence(Qt::Key_Comma)});
  QAction* next = add(viewMenu_, tr("Next Frame"), QKeySequence(Qt::Key_Right), [this] { preview_->stepFrame(1); });
  next->setShortcuts({QKeySequence(Qt::Key_Right), QKeySequence(Qt::Key_Period)});
  add(viewMenu_, tr("Go to Start"), QKeySequence(Qt::Key_Home), [this] { timeline_->setPlayhead(0); });
  add(viewMenu_, tr("Go to End"), QKeySequence(Qt::Key_End),
      [this] { timeline_->setPlayhead(std::max(0, document_->sequence().totalFrames() - 1)); });
  add(viewMenu_, tr("Set Loop &In"), QKeySequence(Qt::Key_I), [this] { preview_->setLoopIn(); });
  add(viewMenu_, tr("Set Loop &Out"), QKeySequence(Qt::Key_O), [this] { preview_->setLoopOut(); });
  add(viewMenu_, tr("Clear Loop"), QKeySequence(Qt::ALT | Qt::Key_X), [this] { preview_->clearLoop(); });
  viewMenu_->addSeparator();
  advancedAction_ = viewMenu_->addAction(tr("&Advanced Figures"));
  advancedAction_->setCheckable(true);
  advancedAction_->setChecked(settings_->advancedFigures());
  advancedAction_->setToolTip(tr("The allocator's figures, the memory plan's items and every cut figure"));
  connect(advancedAction_, &QAction::toggled, this, &MainWindow::setAdvancedFigures);
  add(viewMenu_, tr("Reset &Layout"), QKeySequence(), [this] { restoreState(defaultState_); });
  shotActions_ = {addShotAction, duplicate, split, disable, remove, nullptr, fit};

  renderAction_ =
      add(renderMenu, tr("&Render Sequence"), QKeySequence(Qt::CTRL | Qt::Key_R), [this] { renderSequence(); });
  renderAction_->setToolTip(tr("Render every shot that changed since the last render (Ctrl+R)"));
  stopNowAction_ = add(renderMenu, tr("Stop &Now"), QKeySequence(Qt::CTRL | Qt::Key_Period), [this] {
    controller_->stop(render::StopRequest::Now);
    log(tr("Stopping now…"));
  });
  stopAfterAction_ =
      add(renderMenu, tr("Stop &After This Shot"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period), [this] {
        controller_->stop(render::StopRequest::AfterShot);
        log(tr("Will stop once this shot is written."));
      });
  renderMenu->addSeparator();
  add(renderMenu, tr("Open Output &Folder"), QKeySequence(), [this] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(RenderController::outputDirectoryFor(document_->filePath())));
  });
  add(helpMenu, tr("&Keyboard Shortcuts"), QKeySequence(Qt::Key_F1), [this] { showShortcuts(); });
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
  connect(stopNowAction_, &QAction::changed, stopButton,
          [this, stopButton] { stopButton->setEnabled(stopNowAction_->isEnabled()); });
  toolbar->addWidget(stopButton);
  toolbar->addSeparator();
  toolbar->addWidget(new QLabel(tr(" Memory policy "), this));
  for (ResidencyPolicy p : kPolicies) policy_->addItem(QString::fromLatin1(toString(p)));
  policy_->setToolTip(
      tr("How the model stays on the device between shots: pinned (fastest), offload, reload, "
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
  for (QAction* action : findChildren<QAction*>())
    if (!action->shortcut().isEmpty() && action->toolTip() == QString(action->text()).remove('&'))
      action->setToolTip(tr("%1 (%2)").arg(QString(action->text()).remove('&'),
                                           action->shortcut().toString(QKeySequence::NativeText)));
  updateRenderActions();
}

void MainWindow::showShortcuts() {
  QString rows;
  for (QMenu* menu : menuBar()->findChildren<QMenu*>()) {
    if (menu->parent() != menuBar()) continue;
    for (QAction* action : menu->actions()) {
      const QList<QKeySequence> keys = action->shortcuts();
      if (keys.isEmpty()) continue;
      QStringList names;
      for (const QKeySequence& key : keys) names << key.toString(QKeySequence::NativeText).toHtmlEscaped();
      rows += QStringLiteral("<tr><td>%1</td><td><b>%2</b></td><td>%3</td></tr>")
                  .arg(QString(menu->title()).remove('&'), names.join(QStringLiteral(", ")),
                       QString(action->text()).remove('&').toHtmlEscaped());
    }
  }
  QMessageBox box(QMessageBox::NoIcon, tr("Keyboard shortcuts"), QString(), QMessageBox::Close, this);
  box.setObjectName(QStringLiteral("ShortcutsDialog"));
  box.setTextFormat(Qt::RichText);
  box.setText(QStringLiteral("<table cellspacing=6>%1</table>").arg(rows));
  shortcutsText_ = box.text();
  if (!qEnvironmentVariableIsSet("SHOTCHAIN_NO_DIALOGS")) box.exec();
}

void MainWindow::updatePolicyBox() {
  const ResidencyPolicy policy = document_->sequence().settings.policy;
  const QSignalBlocker block(policy_);
  policy_->setCurrentIndex(
      static_cast<int>(std::find(std::begin(kPolicies), std::end(kPolicies), policy) - std::begin(kPolicies)));
}

}  // namespace shotchain::ui
