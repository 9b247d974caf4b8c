#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sequence/diagnostic.h"
#include "sequence/sequence.h"

namespace shotchain {

// The reversible edits of a sequence. Each one either applies completely or changes nothing,
// and applying it yields the edit that undoes it. The UI wraps each in one undo step.
struct InsertShot {
  std::size_t index = 0;
  Shot shot;
};
struct RemoveShot {
  std::size_t index = 0;
};
// `to` is the index the shot has after the move.
struct MoveShot {
  std::size_t from = 0;
  std::size_t to = 0;
};
// The copy lands right after the original; an empty id picks an unused one.
struct DuplicateShot {
  std::size_t index = 0;
  std::string newId;
};
// Later shots keep their order and move with it: the track stays gapless (ripple).
struct SetShotLength {
  std::size_t index = 0;
  int frames = 17;
};
// Sets any field(s) of one shot: the whole new value is given.
struct SetShot {
  std::size_t index = 0;
  Shot shot;
};
struct SetSettings {
  SequenceSettings settings;
};
// Splits shot `index` at `frame`, a multiple of `frameStep` (the model's pixel frames per latent frame), into two
// shots (the rules: splitShot in sequence/shot_rules.h); an empty id picks an unused one for the second part.
struct SplitShot {
  std::size_t index = 0;
  int frame = 0;
  int frameStep = 1;
  std::string newId;
};
// Puts `shots` in place of the `count` shots from `index` on: what undoes a split (and itself).
struct ReplaceShots {
  std::size_t index = 0;
  std::size_t count = 0;
  std::vector<Shot> shots;
};

using Edit = std::variant<InsertShot, RemoveShot, MoveShot, DuplicateShot, SetShotLength, SetShot, SetSettings,
                          SplitShot, ReplaceShots>;

struct EditResult {
  std::optional<Edit> inverse;  // set exactly when the edit was applied
  Diagnostics errors;           // why it was refused, with paths such as "shots[2].frames"
  bool ok() const { return inverse.has_value(); }
};

EditResult applyEdit(Sequence& sequence, const Edit& edit);

// A short label for an undo menu: "Move shot", "Change length of Opening".
std::string describeEdit(const Sequence& sequence, const Edit& edit);

}  // namespace shotchain
