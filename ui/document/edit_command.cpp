#include "document/edit_command.h"

#include "document/sequence_document.h"

namespace shotchain::ui {

EditCommand::EditCommand(SequenceDocument* document, Edit applied, Edit inverse, const QString& text)
    : document_(document), forward_(std::move(applied)), backward_(std::move(inverse)) {
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

}  // namespace shotchain::ui
