#include "document/edit_command.h"

#include "document/sequence_document.h"

namespace shotchain::ui {

EditCommand::EditCommand(SequenceDocument* document, Edit applied, Edit inverse, const QString& text,
                         const QString& mergeKey)
    : document_(document), forward_(std::move(applied)), backward_(std::move(inverse)), mergeKey_(mergeKey) {
  setText(text);
}

void EditCommand::redo() {
  if (firstRedo_) {
    firstRedo_ = false;
    return;
  }
  EditResult result = document_->applyDirect(forward_);
  Q_ASSERT(result.ok());
  if (result.ok()) backward_ = std::move(*result.inverse);
}

void EditCommand::undo() {
  EditResult result = document_->applyDirect(backward_);
  Q_ASSERT(result.ok());
  if (result.ok()) forward_ = std::move(*result.inverse);
}

// Both edits carry whole values (SetShot, SetShotLength, SetSettings), so the later forward
// edit and the earlier inverse span the merged step.
bool EditCommand::mergeWith(const QUndoCommand* other) {
  const auto* next = dynamic_cast<const EditCommand*>(other);
  if (next == nullptr || next->mergeKey_ != mergeKey_ || next->forward_.index() != forward_.index()) return false;
  forward_ = next->forward_;
  return true;
}

}  // namespace shotchain::ui
