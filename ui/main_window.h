#pragma once

#include <QMainWindow>

class QLabel;
class QListWidget;
class QTableView;

namespace shotchain::ui {

class SequenceDocument;
class ShotTableModel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // `deviceDescription` is shown in the status bar ("CPU (2 threads)", a GPU's name).
  explicit MainWindow(const QString& deviceDescription, QWidget* parent = nullptr);

  SequenceDocument* document() const { return document_; }
  QTableView* shotView() const { return shotView_; }
  // Loads a sequence file; on failure shows every problem and keeps the current document.
  bool openFile(const QString& path);
  bool save();
  bool saveAs();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createActions();
  void newDocument();
  void openWithDialog();
  bool confirmDiscard();
  void updateTitle();
  void refreshProblems();
  std::size_t currentRow() const;
  void addShot();
  void duplicateShot();
  void deleteShot();
  void moveShot(int delta);
  void reportRefusal(const QString& reason);

  SequenceDocument* document_;
  ShotTableModel* shotModel_;
  QTableView* shotView_;
  QListWidget* problems_;
  QLabel* summary_;
};

}  // namespace shotchain::ui
