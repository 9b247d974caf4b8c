#include "sequence/edits.h"

#include <algorithm>
#include <utility>

#include "sequence/shot_rules.h"
#include "sequence/validation.h"

namespace shotchain {
namespace {

EditResult refuse(std::string path, std::string message) {
  EditResult result;
  result.errors.push_back({Diagnostic::Severity::Error, std::move(path), std::move(message)});
  return result;
}

EditResult accepted(Edit inverse) {
  EditResult result;
  result.inverse = std::move(inverse);
  return result;
}

std::optional<EditResult> checkIndex(const Sequence& sequence, std::size_t index, std::size_t limit) {
  if (index < limit) return std::nullopt;
  return refuse(shotPath(index), "no such shot (the sequence has " + std::to_string(sequence.shots.size()) + " shots)");
}

// Errors of `shot` if it were placed at `index`; warnings do not refuse an edit.
Diagnostics shotErrors(const Sequence& sequence, const Shot& shot, std::size_t index,
                       std::optional<std::size_t> replacing) {
  Diagnostics errors;
  for (auto& d : validateShot(shot, index))
    if (d.isError()) errors.push_back(std::move(d));
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    if (replacing && i == *replacing) continue;
    if (sequence.shots[i].id == shot.id) {
      errors.push_back({Diagnostic::Severity::Error, shotPath(index, "id"), "\"" + shot.id + "\" is already used"});
      break;
    }
  }
  return errors;
}

struct Applier {
  Sequence& sequence;

  EditResult operator()(const InsertShot& edit) {
    if (auto bad = checkIndex(sequence, edit.index, sequence.shots.size() + 1)) return *bad;
    EditResult result;
    result.errors = shotErrors(sequence, edit.shot, edit.index, std::nullopt);
    if (!result.errors.empty()) return result;
    sequence.shots.insert(sequence.shots.begin() + static_cast<std::ptrdiff_t>(edit.index), edit.shot);
    return accepted(RemoveShot{edit.index});
  }

  EditResult operator()(const RemoveShot& edit) {
    if (auto bad = checkIndex(sequence, edit.index, sequence.shots.size())) return *bad;
    Shot removed = std::move(sequence.shots[edit.index]);
    sequence.shots.erase(sequence.shots.begin() + static_cast<std::ptrdiff_t>(edit.index));
    return accepted(InsertShot{edit.index, std::move(removed)});
  }

  EditResult operator()(const MoveShot& edit) {
    if (auto bad = checkIndex(sequence, edit.from, sequence.shots.size())) return *bad;
    if (auto bad = checkIndex(sequence, edit.to, sequence.shots.size())) return *bad;
    auto& shots = sequence.shots;
    const auto from = shots.begin() + static_cast<std::ptrdiff_t>(edit.from);
    const auto to = shots.begin() + static_cast<std::ptrdiff_t>(edit.to);
    if (edit.from < edit.to)
      std::rotate(from, from + 1, to + 1);
    else if (edit.to < edit.from)
      std::rotate(to, from, from + 1);
    return accepted(MoveShot{edit.to, edit.from});
  }

  EditResult operator()(const DuplicateShot& edit) {
    if (auto bad = checkIndex(sequence, edit.index, sequence.shots.size())) return *bad;
    Shot copy = sequence.shots[edit.index];
    copy.id = edit.newId.empty() ? sequence.unusedShotId() : edit.newId;
    if (!copy.name.empty()) copy.name += " copy";
    return (*this)(InsertShot{edit.index + 1, std::move(copy)});
  }

  EditResult operator()(const SetShotLength& edit) {
    if (auto bad = checkIndex(sequence, edit.index, sequence.shots.size())) return *bad;
    Shot changed = sequence.shots[edit.index];
    const int oldFrames = changed.frames;
    changed.frames = edit.frames;
    EditResult result;
    result.errors = shotErrors(sequence, changed, edit.index, edit.index);
    if (!result.errors.empty()) return result;
    sequence.shots[edit.index] = std::move(changed);
    return accepted(SetShotLength{edit.index, oldFrames});
  }

  EditResult operator()(const SetShot& edit) {
    if (auto bad = checkIndex(sequence, edit.index, sequence.shots.size())) return *bad;
    EditResult result;
    result.errors = shotErrors(sequence, edit.shot, edit.index, edit.index);
    if (!result.errors.empty()) return result;
    Shot old = std::exchange(sequence.shots[edit.index], edit.shot);
    return accepted(SetShot{edit.index, std::move(old)});
  }

  EditResult operator()(const SetSettings& edit) {
    EditResult result;
    for (auto& d : validateSettings(edit.settings))
      if (d.isError()) result.errors.push_back(std::move(d));
    if (!result.errors.empty()) return result;
    SequenceSettings old = std::exchange(sequence.settings, edit.settings);
    return accepted(SetSettings{std::move(old)});
  }

  EditResult operator()(const SplitShot& edit) {
    if (auto bad = checkIndex(sequence, edit.index, sequence.shots.size())) return *bad;
    SplitResult split = splitShot(sequence, sequence.shots[edit.index].id, edit.frame, edit.frameStep, edit.newId);
    if (!split.ok()) {
      EditResult result;
      result.errors = std::move(split.errors);
      return result;
    }
    Shot original = sequence.shots[edit.index];
    sequence = std::move(*split.sequence);
    return accepted(ReplaceShots{edit.index, 2, {std::move(original)}});
  }

  EditResult operator()(const ReplaceShots& edit) {
    const std::size_t size = sequence.shots.size();
    if (edit.index > size || edit.count > size - edit.index)
      return refuse(shotPath(edit.index), "no " + std::to_string(edit.count) + " shots from here (the sequence has " +
                                              std::to_string(size) + " shots)");
    Sequence candidate;
    candidate.shots = sequence.shots;
    auto& shots = candidate.shots;
    const auto first = shots.begin() + static_cast<std::ptrdiff_t>(edit.index);
    std::vector<Shot> removed(first, first + static_cast<std::ptrdiff_t>(edit.count));
    shots.erase(first, first + static_cast<std::ptrdiff_t>(edit.count));
    shots.insert(shots.begin() + static_cast<std::ptrdiff_t>(edit.index), edit.shots.begin(), edit.shots.end());
    EditResult result;
    for (std::size_t at = edit.index; at < edit.index + edit.shots.size(); ++at) {
      Diagnostics errors = shotErrors(candidate, shots[at], at, at);
      result.errors.insert(result.errors.end(), errors.begin(), errors.end());
    }
    if (!result.errors.empty()) return result;
    sequence.shots = std::move(shots);
    return accepted(ReplaceShots{edit.index, edit.shots.size(), std::move(removed)});
  }
};

std::string shotLabel(const Sequence& sequence, std::size_t index) {
  if (index >= sequence.shots.size()) return "shot";
  return sequence.shots[index].displayName();
}

}  // namespace

EditResult applyEdit(Sequence& sequence, const Edit& edit) { return std::visit(Applier{sequence}, edit); }

std::string describeEdit(const Sequence& sequence, const Edit& edit) {
  struct Describer {
    const Sequence& sequence;
    std::string operator()(const InsertShot& e) const { return "Add " + e.shot.displayName(); }
    std::string operator()(const RemoveShot& e) const { return "Delete " + shotLabel(sequence, e.index); }
    std::string operator()(const MoveShot& e) const { return "Move " + shotLabel(sequence, e.from); }
    std::string operator()(const DuplicateShot& e) const { return "Duplicate " + shotLabel(sequence, e.index); }
    std::string operator()(const SetShotLength& e) const { return "Change length of " + shotLabel(sequence, e.index); }
    std::string operator()(const SetShot& e) const { return "Edit " + shotLabel(sequence, e.index); }
    std::string operator()(const SetSettings&) const { return "Change sequence settings"; }
    std::string operator()(const SplitShot& e) const { return "Split " + shotLabel(sequence, e.index); }
    std::string operator()(const ReplaceShots&) const { return "Replace shots"; }
  };
  return std::visit(Describer{sequence}, edit);
}

}  // namespace shotchain
