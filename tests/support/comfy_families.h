#pragma once

// Import options that read the registry's model families, as the CLI and the studio pass them.
#include "interop/comfy_import.h"
#include "models/model_set_facts.h"

namespace shotchain::testing {

inline interop::ComfyImportOptions withFamilies(interop::ComfyImportOptions options = {}) {
  options.families = models::comfyWordsOfFamilies();
  return options;
}

}  // namespace shotchain::testing
