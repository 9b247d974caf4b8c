#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "interop/comfy_graph.h"
#include "sequence/sequence.h"

namespace shotchain::interop {

struct ComfyImportOptions {
  // ComfyUI models folders where the loaders' file names are looked up (diffusion_models/ or unet/,
  // vae/, text_encoders/ or clip/, or flat). A name "builtin:demo" is the built-in demo model.
  std::vector<std::filesystem::path> modelFolders;
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
  std::vector<std::string> notes;      // values that changed meaning on the way (a scheduler, a denoise, a file not found)
};

// The node types a workflow may use and what they become (the closing note's list).
const std::vector<std::string>& mappedComfyNodeTypes();

// Reads a ComfyUI workflow (UI or API format) into a sequence: every KSampler / KSamplerAdvanced is
// a shot, in graph order, its prompt, size, length, seed, steps, guidance and shift from the nodes
// feeding it; ZeroCopyLatentHandoff / ZeroCopyLatentStore give the continuity and ring-buffer tags,
// ZeroCopyVRAMPin the residency. Throws std::runtime_error naming `source` and the node for malformed
// JSON, cycles, a workflow without a sampler, and a node of a type it cannot map where a shot's value
// comes from.
ComfyImport importComfyWorkflow(const std::string& text, const std::string& source, const ComfyImportOptions& options = {});

}  // namespace shotchain::interop
