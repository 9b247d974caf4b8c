#pragma once

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>

#include <optional>

namespace shotchain::ui {

class SequenceDocument;

// Writes the open document to a recovery file every few seconds while it has unsaved changes, and
// removes it once the document is saved or closed cleanly. A recovery file that is newer than its
// sequence file at the next start is what a crash left behind.
class Autosave : public QObject {
  Q_OBJECT

 public:
  explicit Autosave(SequenceDocument* document, int intervalMs = 5000, QObject* parent = nullptr);

  // AppLocalData/recovery/<name>-<hash of the path>.json ("untitled.json" for a new document).
  static QString recoveryPathFor(const QString& sequencePath);
  // The recovery file for `sequencePath` when one exists and is newer than the file itself.
  static std::optional<QString> pendingRecovery(const QString& sequencePath);

  // Writes now if there are unsaved changes not yet in the recovery file; true when it wrote.
  bool saveNow();
  // Removes the current document's recovery file.
  void discard();

 private:
  SequenceDocument* document_;
  QTimer timer_;
  bool pending_ = false;
};

}  // namespace shotchain::ui
