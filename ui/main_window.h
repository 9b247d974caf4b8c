#pragma once

#include <QMainWindow>

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "render/render_controller.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QListWidget;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QTableView;
class QTimer;

namespace shotchain::ui {

class Autosave;
class CutTableModel;
class InspectorPanel;
class MessageBanner;
class ModelBrowser;
class PreferencesDialog;
class PreviewPanel;
class PromptPrecomputer;
class RenderState;
class SequenceDocument;
class ShotTableModel;
class StudioSettings;
class TimelineView;
class VramPanel;

// Whether the studio may open a modal dialog: not when SHOTCHAIN_NO_DIALOGS is set (tests, scripted runs).
bool dialogsAllowed();

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // `deviceDescription` is shown in the toolbar ("CPU (2 threads)", a GPU's name). `renderHook`
  // adjusts every render's options (tests).
  explicit MainWindow(const QString& deviceDescription, QWidget* parent = nullptr,
                      RenderController::OptionsHook renderHook = {});
  ~MainWindow() override;

  SequenceDocument* document() const { return document_; }
  QTableView* shotView() const { return shotView_; }
  TimelineView* timeline() const { return timeline_; }
  InspectorPanel* inspector() const { return inspector_; }
  PreviewPanel* preview() const { return preview_; }
  VramPanel* vramPanel() const { return vram_; }
  CutTableModel* cutModel() const { return cutModel_; }
  RenderController* renderController() const { return controller_; }
  RenderState* renderState() const { return renderState_; }
  PromptPrecomputer* promptPrecomputer() const { return prompts_; }
  MessageBanner* banner() const { return banner_; }
  QLabel* sequenceSummary() const { return summary_; }  // the status bar's shots, frames and seconds
  QAction* renderAction() const { return renderAction_; }
  QAction* stopNowAction() const { return stopNowAction_; }
  QAction* stopAfterShotAction() const { return stopAfterAction_; }
  QComboBox* policyBox() const { return policy_; }
  // The table Help › Keyboard Shortcuts last showed (rich text), for tests.
  const QString& shortcutsText() const { return shortcutsText_; }

  // Loads a sequence file (offering a newer recovery file first); on failure shows every problem
  // and keeps the current document.
  bool openFile(const QString& path);
  // File › Import ComfyUI workflow…: the workflow (UI or API format) becomes a new untitled,
  // unsaved document; what was not mapped is listed in a message and the status bar. The workflow
  // file is only read. False, with the reason shown, when it cannot be imported.
  bool importComfyFile(const QString& path);
  bool save();
  bool saveAs();
  // File › Save As… once the name is chosen (tests call it directly).
  bool saveAsFile(QString path);
  // Starts a render of the document as it is now; false (with a banner) when it cannot start.
  bool renderSequence();
  // Asked whether to use a recovery file; the default asks with a dialog (tests replace it).
  void setRecoveryPrompt(std::function<bool(const QString& recoveryFile)> prompt) {
    recoveryPrompt_ = std::move(prompt);
  }
  // At start with no file: offers the untitled document a crash left behind.
  void offerUntitledRecovery();
  // At the first start: asks for the model folders (a ComfyUI models folder) once, then never again.
  void offerModelFolders();
  // Edit › Preferences…; tests get the dialog through `preferencesHook` before it runs.
  void showPreferences();
  void setPreferencesHook(std::function<void(PreferencesDialog&)> hook) { preferencesHook_ = std::move(hook); }
  ModelBrowser* modelBrowser() const { return modelBrowser_; }
  // View › Advanced Figures: the allocator's figures, the plan's items, the cut table's engineering
  // columns and the allocator setting; off, the default screen shows what a film-maker reads.
  void setAdvancedFigures(bool on);
  QTableView* cutView() const { return cutView_; }

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createDocks();
  QDockWidget* createModelDock();
  void createActions();
  void connectRenderer();
  void newDocument();
  void importComfyWithDialog();
  void openWithDialog();
  bool confirmDiscard();
  bool saveTo(const QString& path);
  void updateTitle();
  void refreshProblems();
  void updateRecentMenu();
  void updateRenderActions();
  // Tells the render state where the document's files and its renders are (after an open or a save as).
  void updateRenderFolders();
  void updatePolicyBox();
  void setSelectedShot(int index);
  int currentShot() const;
  void addShot();
  void duplicateShot();
  void deleteShot();
  // S: splits the shot under the playhead at the latent boundary nearest it.
  void splitAtPlayhead();
  // Delete: the current shot stays on the timeline, not rendered (or is enabled again).
  void toggleShotEnabled();
  // Help › Keyboard Shortcuts: every action with a shortcut, read from the actions themselves.
  void showShortcuts();
  void moveShot(int delta);
  void reportRefusal(const QString& reason);
  void log(const QString& line);
  void renderFinished(const render::SequenceFinished& result, bool failed);
  QString shotLabel(int index) const;

  StudioSettings* settings_;
  SequenceDocument* document_;
  RenderState* renderState_;
  RenderController* controller_;
  PromptPrecomputer* prompts_;
  int liveDecodedShot_ = -1;  // the latest shot of this render whose decoded frames the viewer showed
  int livePreviewShot_ = -1;  // the latest shot whose preview-decoder frames the viewer plays
  Autosave* autosave_;
  ShotTableModel* shotModel_;
  CutTableModel* cutModel_;
  QTableView* shotView_;
  TimelineView* timeline_;
  InspectorPanel* inspector_;
  PreviewPanel* preview_;
  VramPanel* vram_;
  MessageBanner* banner_;
  QListWidget* problems_;
  QPlainTextEdit* log_;
  QLabel* summary_;
  QLabel* deviceLabel_;
  QProgressBar* progress_;
  QLabel* progressText_;
  QComboBox* policy_;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QAction* renderAction_ = nullptr;
  QAction* advancedAction_ = nullptr;
  QTableView* cutView_ = nullptr;
  QAction* stopNowAction_ = nullptr;
  QAction* stopAfterAction_ = nullptr;
  QList<QAction*> shotActions_;
  QString shortcutsText_;  // what Help › Keyboard Shortcuts showed last
  ModelBrowser* modelBrowser_ = nullptr;
  QString pendingProblem_;  // a settings edit the document refused (SettingsInspector::pendingProblemChanged)
  std::function<void(PreferencesDialog&)> preferencesHook_;
  QTimer* memoryTimer_;
  QByteArray defaultState_;
  std::function<bool(const QString&)> recoveryPrompt_;
  QString deviceDescription_;
};

}  // namespace shotchain::ui
