#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <filesystem>
#include <optional>

#include "resolve/resolved_shot.h"
#include "sequence/edits.h"
#include "sequence/sequence.h"
#include "sequence/validation.h"

namespace shotchain::ui {

// The open sequence: core's document, its file, and the undo stack through which every
// user edit passes (one core edit = one undo step; a macro groups several into one).
class SequenceDocument : public QObject {
  Q_OBJECT

 public:
  explicit SequenceDocument(QObject* parent = nullptr);

  const Sequence& sequence() const { return sequence_; }
  QString filePath() const { return filePath_; }
  QString displayName() const;
  // Where the document's relative paths resolve: the sequence file's folder (empty when untitled).
  std::filesystem::path baseFolder() const;
  // The document resolved against its model set (resolve/resolve_sequence.h): every shot's effective settings
  // and every problem a render would refuse. Worked out again after a change, when first asked.
  const resolve::ResolvedSequence& resolved() const;
  // The model files may have changed on disk (a rescan of the model folders): resolve again, emitting changed().
  void modelFilesChanged();
  QUndoStack* undoStack() { return &undoStack_; }
  bool isModified() const { return !undoStack_.isClean(); }

  // Replaces the whole document (after New/Open); clears the undo history.
  // `modified` marks a recovered document as unsaved.
  void reset(Sequence sequence, const QString& filePath, bool modified = false);
  // Applies the edit as one undoable step; on refusal nothing changes and the errors say why. A shot edit that
  // would give the shot a length or size the model set cannot take is refused too.
  // Consecutive edits with the same non-empty `mergeKey` fold into one step.
  Diagnostics edit(const Edit& edit, const QString& mergeKey = {});
  // Atomic; throws FileWriteError (naming the file) and leaves the document modified on failure.
  void saveAs(const QString& filePath);

  // Used by EditCommand only.
  EditResult applyDirect(const Edit& edit);

 Q_SIGNALS:
  void changed();
  // After New/Open/recovery: selections and render state of the old document are void.
  void replaced();
  void filePathChanged(const QString& path);

 private:
  Sequence sequence_;
  QString filePath_;
  QUndoStack undoStack_;
  mutable std::optional<resolve::ResolvedSequence> resolved_;
};

}  // namespace shotchain::ui
