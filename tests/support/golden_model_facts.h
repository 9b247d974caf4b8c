#pragma once

// Model sets made of the golden tiny files, read from their headers, to resolve documents against a real family
// (the Wan 2.2 TI2V or I2V rows, a Wan 2.1 DiT) without weights on the machine.
#include <string>

#include "models/model_set_facts.h"
#include "render/shot_key.h"
#include "resolve/resolve_sequence.h"
#include "test_support.h"

namespace shotchain::testing {

inline models::ModelSetFacts goldenModelFacts(const std::string& dit, const std::string& vae,
                                              const std::string& highNoise = {}) {
  models::ModelFiles files;
  files.dit = golden(dit);
  files.vae = golden(vae);
  files.textEncoder = golden("umt5_tiny.safetensors");
  files.tokenizer = sourceDir() / "resources" / "demo" / "tokenizer.model";
  if (!highNoise.empty()) files.ditHighNoise = golden(highNoise);
  return models::readModelSetFacts(files);
}

// The shot keys of `sequence` as a render resolves it from `folder` (its model set read from its files), under a
// model fingerprint that stands for the model files.
inline std::vector<std::string> shotKeysOf(const Sequence& sequence, const std::filesystem::path& folder) {
  return render::shotKeys(resolve::resolveSequence(sequence, {folder}), "model");
}

inline resolve::ResolvedSequence resolvedAgainst(const Sequence& sequence, const models::ModelSetFacts& facts) {
  return resolve::resolveSequence(sequence, facts, {});
}

}  // namespace shotchain::testing
