#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shotchain::interop {

// An input fed by another node's output.
struct ComfyLink {
  std::string node;  // the source node's id
  int slot = 0;      // its output index
};

// One node of a ComfyUI workflow in either format, inputs by name: widget values and links apart.
struct ComfyNode {
  std::string id;
  std::string type;  // class_type
  std::map<std::string, nlohmann::json> values;
  std::map<std::string, ComfyLink> links;
  std::string title;  // the UI format's title, when set

  const nlohmann::json* value(const std::string& name) const;
  std::optional<ComfyLink> link(const std::string& name) const;
};

enum class ComfyFormat { Ui, Api };

// The node types the model families' ComfyUI words name (models::ComfyWords), by the widgets they have: video
// latents (width, height, length, batch_size) and motion nodes (length, motion_latent_count).
struct FamilyNodeTypes {
  std::vector<std::string> videoLatents;
  std::vector<std::string> motion;
};

// Both ComfyUI formats read into one graph: the UI format ("nodes" with positional widgets_values
// and a "links" table) and the API format ({id: {class_type, inputs}}).
struct ComfyGraph {
  ComfyFormat format = ComfyFormat::Api;
  std::map<std::string, ComfyNode> nodes;  // by id
  std::vector<std::string> order;          // topological: every node after the nodes feeding it (ties by id)
  std::map<std::string, std::vector<std::string>> consumerIds;  // by id: the nodes it feeds, in `order`

  const ComfyNode* find(const std::string& id) const;
  // The ids of nodes with an input linked to `id`'s outputs, in `order`.
  const std::vector<std::string>& consumers(const std::string& id) const;
};

// A workflow value as a message quotes it: compact JSON, at most 60 bytes and "…".
std::string shortJson(const nlohmann::json& value);

// ComfyUI-GGUF's UnetLoaderGGUF and UnetLoaderGGUFAdvanced, and ComfyUI-MultiGPU's copies of them: a DiT from a
// .gguf file, its other fields (dequantisation dtypes, devices, virtual VRAM) left to ShotChain's memory plan.
const std::vector<std::string>& ggufUnetLoaderTypes();
bool isGgufUnetLoader(const std::string& type);

// The widget names of a node type in the UI format's widgets_values order (ComfyUI's own order,
// "control_after_generate" included where the seed widget has one); a family's video latent node has width,
// height, length and batch_size, its motion node length and motion_latent_count. Empty for a type we do not know.
const std::vector<std::string>& comfyWidgetNames(const std::string& type, const FamilyNodeTypes& familyTypes = {});

// Reads `text` with the strict JSON reader (io/strict_json.h). Throws std::runtime_error naming
// `source` and the node or field for JSON it refuses, a link to a missing node, a node without a
// type, an id or slot that is not a whole number, and a cycle. Linear in the graph's size (a heap
// sort of the ids aside).
ComfyGraph parseComfyGraph(const std::string& text, const std::string& source, const FamilyNodeTypes& familyTypes = {});

}  // namespace shotchain::interop
