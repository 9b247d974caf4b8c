#pragma once

#include <filesystem>

#include "sequence/sequence.h"

namespace shotchain::render {

// Before any work: every LoRA file the enabled shots first..last name is a regular, readable file;
// throws RenderError naming the document field ("loras[0].file", "shots[2].loras[1].file") and the file.
// (Whether it fits the DiT is checked when the DiT is loaded, at the shot.)
void requireLoraFiles(const Sequence& sequence, const std::filesystem::path& sequenceDirectory, int first, int last);
// Whether an enabled shot of first..last has LoRAs (its own or the sequence's).
bool anyLoras(const Sequence& sequence, int first, int last);

}  // namespace shotchain::render
