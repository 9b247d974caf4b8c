#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/lora/lora_summary.h"
#include "models/model_family.h"
#include "sequence/sequence.h"

namespace shotchain::models {

// One weights file as `shotchain models` and the studio's model browser list it, from its header alone.
struct CataloguedModel {
  std::filesystem::path file;
  IdentifiedModel id;
  std::uint64_t bytes = 0;
  std::string
      dtype;  // the dtype holding most of the bytes ("BF16", "F8_E4M3", …); a GGUF file's block types ("Q4_K+Q6_K")
  std::string problem;              // why it cannot be used (also an unreadable header); empty when it can
  std::optional<LoraSummary> lora;  // a LoRA file (role None): what it patches
};

CataloguedModel catalogueModelFile(const std::filesystem::path& file);
// What a LoRA file is, in words: "LoRA, 400 layers, rank 128, for a <family>, <what its family publishes under
// that name>"; what it was trained for is read from its file name (FamilyKnowledge::namedLoras), as nothing in
// its header says.
std::string describeLora(const LoraSummary& lora, const std::filesystem::path& file);
// A file's family and role in words from its header ("Wan 2.2 TI2V, 5B"), with why it cannot be used
// after ": "; "" when it is no model ShotChain knows (interop::ComfyImportOptions::readModelFile).
std::string describeModelFile(const std::filesystem::path& file);
// Every weights file under the folders (weightsFilesIn), in order; a folder that does not exist adds nothing.
std::vector<CataloguedModel> catalogueModelFolders(const std::vector<std::filesystem::path>& folders);

// What a sequence's model set resolves to: the files it will load, or why it cannot (the document
// field and the reason, as resolveModelFiles throws it).
struct ModelSetUse {
  std::filesystem::path dit, vae, textEncoder;
  std::filesystem::path ditHighNoise;  // two experts: the high-noise one (empty: one DiT)
  std::uint64_t ditParameters = 0;     // of the DiT, from its header (0 when it cannot be read)
  std::string problem;                 // empty when every component was found
};
ModelSetUse resolveModelSetUse(const ModelSet& model, const std::filesystem::path& sequenceDirectory);

// The model set after the user picks `file` for `role` in the model browser. A file of the built-in
// demo model's folder makes the set builtin:demo again (fields this build does not know are kept). Inside one of
// `folders` (ComfyUI models folders) the set becomes that folder with the file relative to it (the
// other components are found there by their headers unless already named in it); elsewhere the
// role's field is the file's absolute path and the set leaves the built-in model.
// A role no field holds (a preview decoder, found in the folder by itself) leaves the set as it is.
ModelSet chooseModelFile(const ModelSet& current, ModelRole role, const std::filesystem::path& file,
                         const std::vector<std::filesystem::path>& folders);
// The same for the high-noise expert of a two-expert pair (Wan 2.2 A14B): `file` becomes model.dit_high_noise
// (relative to the set's folder when it lies inside it, else absolute); `model.dit` stays the low-noise one.
// An empty `file` takes the expert away (one DiT again).
ModelSet chooseHighNoiseExpert(const ModelSet& current, const std::filesystem::path& file);
// A LoRA file added to the sequence's `loras` at strength 1 (stored relative to `sequenceDirectory` when inside it).
std::vector<LoraRef> addSequenceLora(const std::vector<LoraRef>& current, const std::filesystem::path& file,
                                     const std::filesystem::path& sequenceDirectory);

}  // namespace shotchain::models
