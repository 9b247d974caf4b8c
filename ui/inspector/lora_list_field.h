#pragma once

#include <QWidget>

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "sequence/sequence.h"

class QCheckBox;
class QTableWidget;

namespace shotchain::ui {

// A LoRA stack as the document stores it: a row per LoRA with its file and strength. "Add LoRA…" picks a
// file (stored relative to the document's folder when it is inside it), "Remove" drops the selected row,
// and a strength is edited in its cell. A shot's field (`inheritable`) also has "As the sequence": checked,
// the shot has no list of its own. Every change hands the whole new list to the callback (the caller commits
// it as one undo step); setLoras shows the document's value without calling it.
class LoraListField : public QWidget {
  Q_OBJECT

 public:
  using Edited = std::function<void(const std::optional<std::vector<LoraRef>>&)>;

  LoraListField(bool inheritable, QWidget* parent = nullptr);
  void setBaseFolder(const std::filesystem::path& folder) { baseFolder_ = folder; }
  void setOnEdited(Edited edited) { edited_ = std::move(edited); }
  // The list the shot or sequence renders with; `own` false: the shot follows the sequence's (shown greyed out).
  void setLoras(const std::vector<LoraRef>& shown, bool own = true);
  // What "Add LoRA…" does with a chosen file (for tests, which choose no file in a dialog).
  void addFile(const QString& path);
  QTableWidget* table() const { return table_; }
  QCheckBox* inheritBox() const { return inherit_; }

 private:
  void emitEdited();
  std::vector<LoraRef> rows() const;
  void showRows(const std::vector<LoraRef>& loras);

  std::filesystem::path baseFolder_;
  Edited edited_;
  QCheckBox* inherit_ = nullptr;
  QTableWidget* table_;
  std::vector<LoraRef> current_;  // what the document holds for this list (unknown fields kept)
  bool own_ = true;               // the list is this shot's own (or the sequence's)
};

}  // namespace shotchain::ui
