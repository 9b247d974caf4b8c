#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "interop/comfy_graph.h"
#include "models/family_knowledge.h"
#include "sequence/sequence.h"

namespace shotchain::interop {

struct ComfyImportOptions {
  // ComfyUI models folders where the loaders' file names are looked up (diffusion_models/ or unet/,
  // vae/, text_encoders/ or clip/, or flat). A name "builtin:demo" is the built-in demo model.
  std::vector<std::filesystem::path> modelFolders;
  // Names a model file's family from its header (ComfyImport::models); without it, from the file name only.
  std::function<std::string(const std::filesystem::path&)> readModelFile;
  // Names the family a file name suggests (models::familyFromFileName); without it, the name is given as it is.
  std::function<std::string(const std::string&)> familyFromName;
  // The ComfyUI words of the model families it reads (models::comfyWordsOfFamilies): their image latents,
  // image-to-video nodes and text encoder types. Without them, only ComfyUI's own nodes are read.
  std::vector<models::ComfyWords> families;
};

// A node the sequence does not carry, and why.
struct UnmappedNode {
  std::string id;
  std::string type;
  std::string why;
};

struct ComfyImport {
  Sequence sequence;
  ComfyFormat format = ComfyFormat::Api;
  std::vector<UnmappedNode> unmapped;  // in graph order
  std::vector<std::string> notes;  // values that changed meaning on the way (a scheduler, a denoise, a file not found)
  // Samplers (shots) that could not be carried over, each naming the node and why (not also in `unmapped`);
  // the rest of the workflow was imported.
  std::vector<std::string> problems;
  std::string models;  // the diffusion model(s) in words: family (from the header, else the file name) and file
};

// The node types a workflow may use (ComfyUI's own and those of `families`) and what they become (the closing
// note's list).
std::vector<std::string> mappedComfyNodeTypes(const std::vector<models::ComfyWords>& families);

// Reads a ComfyUI workflow (UI or API format) into a sequence: every KSampler / KSamplerAdvanced is
// a shot, in graph order, its prompt, size, length, seed, steps, guidance and shift from the nodes
// feeding it; ZeroCopyLatentHandoff / ZeroCopyLatentStore give the continuity and ring-buffer tags,
// ZeroCopyVRAMPin the residency. A sampler whose values come from nodes it cannot map (or are out of
// range) is left out and listed in `problems`, naming the node; the other shots are
// imported. Throws std::runtime_error naming `source` for malformed JSON, cycles, and a workflow of which
// no shot can be imported (every problem listed).
ComfyImport importComfyWorkflow(const std::string& text, const std::string& source,
                                const ComfyImportOptions& options = {});

}  // namespace shotchain::interop
