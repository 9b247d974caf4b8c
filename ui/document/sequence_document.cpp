#include "document/sequence_document.h"

#include <QFileInfo>

#include "document/edit_command.h"
#include "sequence/sequence_io.h"

namespace shotchain::ui {

SequenceDocument::SequenceDocument(QObject* parent) : QObject(parent) {}

QString SequenceDocument::displayName() const {
  return filePath_.isEmpty() ? QStringLiteral("Untitled") : QFileInfo(filePath_).fileName();
}

std::filesystem::path SequenceDocument::baseFolder() const {
  if (filePath_.isEmpty()) return {};
  return std::filesystem::path(QFileInfo(filePath_).absolutePath().toStdString());
}

ValidationContext SequenceDocument::validationContext() const {
  ValidationContext context;
  context.baseFolder = baseFolder();
  return context;
}

void SequenceDocument::reset(Sequence sequence, const QString& filePath, bool modified) {
  sequence_ = std::move(sequence);
  undoStack_.clear();
  undoStack_.setClean();
  if (modified) undoStack_.resetClean();  // a recovered document differs from its file until saved
  const bool newPath = filePath != filePath_;
  filePath_ = filePath;
  Q_EMIT replaced();  // first: a listener of filePathChanged then sees the new document, not the last one
  if (newPath) Q_EMIT filePathChanged(filePath_);
  Q_EMIT changed();
}

Diagnostics SequenceDocument::edit(const Edit& edit, const QString& mergeKey) {
  const QString text = QString::fromStdString(describeEdit(sequence_, edit));
  EditResult result = applyDirect(edit);
  if (!result.ok()) return result.errors;
  undoStack_.push(new EditCommand(this, edit, std::move(*result.inverse), text, mergeKey));
  return {};
}

EditResult SequenceDocument::applyDirect(const Edit& edit) {
  EditResult result = applyEdit(sequence_, edit);
  if (result.ok()) Q_EMIT changed();
  return result;
}

void SequenceDocument::saveAs(const QString& filePath) {
  saveSequenceFile(sequence_, filePath.toStdString());
  undoStack_.setClean();
  if (filePath != filePath_) {
    filePath_ = filePath;
    Q_EMIT filePathChanged(filePath_);
  }
}

}  // namespace shotchain::ui
