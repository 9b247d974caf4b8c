#pragma once

#include <QString>
#include <QUndoCommand>

#include "sequence/edits.h"

namespace shotchain::ui {

class SequenceDocument;

// One user edit on the undo stack. Created after the edit was applied once (to know whether
// core accepted it), so the first redo() does nothing. Commands with the same non-empty merge
// key that follow each other (typing in one field, a stream of length nudges) fold into one step.
class EditCommand : public QUndoCommand {
 public:
  EditCommand(SequenceDocument* document, Edit applied, Edit inverse, const QString& text,
              const QString& mergeKey = {});

  void redo() override;
  void undo() override;
  int id() const override { return mergeKey_.isEmpty() ? -1 : 1; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  SequenceDocument* document_;
  Edit forward_;
  Edit backward_;
  QString mergeKey_;
  bool firstRedo_ = true;
};

}  // namespace shotchain::ui
