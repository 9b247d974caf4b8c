#pragma once

// The model set a sequence names, resolved to its files and read from their headers (models/model_set_facts.h),
// kept while those files keep their size and modification time: the studio resolves after every edit.
#include <filesystem>
#include <optional>
#include <string>

#include "models/model_set_facts.h"
#include "sequence/sequence.h"

namespace shotchain::resolve {

struct ModelSetLookup {
  std::optional<models::ModelSetFacts> facts;  // unset when the set cannot be read
  std::string field;                           // the document field at fault ("model.dit", "model.folder")
  std::string problem;                         // why, with the file
  bool missing = false;                        // a file or folder that is not there (a warning while editing)
};

// Safe to call from several threads.
ModelSetLookup lookUpModelSet(const ModelSet& model, const std::filesystem::path& sequenceDirectory);

}  // namespace shotchain::resolve
