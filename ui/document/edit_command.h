#pragma once

#include <QUndoCommand>

#include "sequence/edits.h"

namespace shotchain::ui {

class SequenceDocument;

// One user edit on the undo stack. Created after the edit was applied once (to know whether
// core accepted it), so the first redo() does nothing.
class EditCommand : public QUndoCommand {
 public:
  EditCommand(SequenceDocument* document, Edit applied, Edit inverse, const QString& text);

  void redo() override;
  void undo() override;

 private:
  SequenceDocument* document_;
  Edit forward_;
  Edit backward_;
  bool firstRedo_ = true;
};

}  // namespace shotchain::ui
