#pragma once

// Turns a sequence and the facts of its model set into one resolved value per shot (resolved_shot.h). Whatever
// a render would refuse is a problem here first, with the field and the fix. Torch-free.
#include <filesystem>

#include "resolve/resolved_shot.h"

namespace shotchain::resolve {

struct ResolveContext {
  std::filesystem::path sequenceDirectory;  // base of the document's relative paths; empty: do not look at files
  // A render refuses a file that is not there (model files, images, LoRAs, calibration files); while
  // editing that is a warning, so the document still opens.
  bool missingFilesAreErrors = false;
  int ranks = 1;  // processes the DiT is spread over (a step cache does not run across them)
};

// Reads the model set (model_lookup.h: cached) and resolves every shot. When the files cannot be read, the
// problem names the field and the shots are checked against the registry's default family.
ResolvedSequence resolveSequence(const Sequence& sequence, const ResolveContext& context);
// The same with the model set's facts at hand.
ResolvedSequence resolveSequence(const Sequence& sequence, const models::ModelSetFacts& models,
                                 const ResolveContext& context);

// Every problem of the document with its model set: resolveSequence(…).problems.
Diagnostics validate(const Sequence& sequence, const ResolveContext& context);

}  // namespace shotchain::resolve
