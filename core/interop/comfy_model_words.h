#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "sequence/sequence.h"

namespace shotchain::interop {

// What a weights file is by its header ("Wan 2.2 TI2V, 5B"), or "" when that is not known; with the reason
// it cannot be used after a ": " when it cannot. The importer has no model code of its own: callers pass one.
using ModelFileReader = std::function<std::string(const std::filesystem::path&)>;
// The family a file name suggests, in words, or "" (models::familyFromFileName).
using FamilyFromName = std::function<std::string(const std::string&)>;

// What an imported workflow's diffusion model is, in words, for the import message: the family `read`
// finds in the file's header when the models folder holds it, else the family its name suggests (`byName`),
// with the file(s).
std::string describeImportedModels(const ModelSet& model, const ModelFileReader& read, const FamilyFromName& byName);

}  // namespace shotchain::interop
