#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "sequence/edits.h"
#include "sequence/sequence.h"

namespace shotchain::ui {

// The open sequence: core's document, its file, and the undo stack through which every
// user edit passes (one core edit = one undo step).
class SequenceDocument : public QObject {
  Q_OBJECT

 public:
  explicit SequenceDocument(QObject* parent = nullptr);

  const Sequence& sequence() const { return sequence_; }
  QString filePath() const { return filePath_; }
  QString displayName() const;
  QUndoStack* undoStack() { return &undoStack_; }
  bool isModified() const { return !undoStack_.isClean(); }

  // Replaces the whole document (after New/Open); clears the undo history.
  void reset(Sequence sequence, const QString& filePath);
  // Applies the edit as one undoable step; on refusal nothing changes and the errors say why.
  Diagnostics edit(const Edit& edit);
  // Atomic; throws FileWriteError (naming the file) and leaves the document modified on failure.
  void saveAs(const QString& filePath);

  // Used by EditCommand only.
  EditResult applyDirect(const Edit& edit);

 Q_SIGNALS:
  void changed();
  void filePathChanged(const QString& path);

 private:
  Sequence sequence_;
  QString filePath_;
  QUndoStack undoStack_;
};

}  // namespace shotchain::ui
