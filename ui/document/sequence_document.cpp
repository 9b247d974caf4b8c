#include "document/sequence_document.h"

#include <QFileInfo>

#include "document/edit_command.h"
#include "resolve/frame_rules.h"
#include "resolve/resolve_sequence.h"
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

void SequenceDocument::modelFilesChanged() {
  resolved_.reset();
  Q_EMIT changed();
}

const resolve::ResolvedSequence& SequenceDocument::resolved() const {
  if (!resolved_) resolved_ = resolve::resolveSequence(sequence_, {baseFolder()});
  return *resolved_;
}

namespace {

// The shot a shot edit leaves at an index, for the model set's frame and size rules.
std::optional<std::size_t> editedShot(const Edit& edit) {
  if (const auto* e = std::get_if<SetShot>(&edit)) return e->index;
  if (const auto* e = std::get_if<SetShotLength>(&edit)) return e->index;
  if (const auto* e = std::get_if<InsertShot>(&edit)) return e->index;
  return std::nullopt;
}

}  // namespace

void SequenceDocument::reset(Sequence sequence, const QString& filePath, bool modified) {
  sequence_ = std::move(sequence);
  resolved_.reset();
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
  if (const std::optional<std::size_t> index = editedShot(edit)) {
    Sequence trial = sequence_;
    const EditResult tried = applyEdit(trial, edit);
    if (!tried.ok()) return tried.errors;
    if (Diagnostics refused = resolve::shotGeometryProblems(trial.shots[*index], *index, resolved().geometry);
        !refused.empty())
      return refused;
  }
  EditResult result = applyDirect(edit);
  if (!result.ok()) return result.errors;
  undoStack_.push(new EditCommand(this, edit, std::move(*result.inverse), text, mergeKey));
  return {};
}

EditResult SequenceDocument::applyDirect(const Edit& edit) {
  EditResult result = applyEdit(sequence_, edit);
  if (!result.ok()) return result;
  resolved_.reset();
  Q_EMIT changed();
  return result;
}

void SequenceDocument::saveAs(const QString& filePath) {
  saveSequenceFile(sequence_, filePath.toStdString());
  undoStack_.setClean();
  if (filePath != filePath_) {
    filePath_ = filePath;
    resolved_.reset();  // relative paths resolve against the new folder
    Q_EMIT filePathChanged(filePath_);
  }
}

}  // namespace shotchain::ui
