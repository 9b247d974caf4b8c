#include "interop/comfy_graph.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace shotchain::interop {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) { throw std::runtime_error(source + ": " + what); }

std::string idText(const Json& id) {
  if (id.is_string()) return id.get<std::string>();
  if (id.is_number_integer()) return std::to_string(id.get<long long>());
  return id.dump();
}

// Numeric ids in numeric order, then the rest by text.
bool idLess(const std::string& a, const std::string& b) {
  const bool na = !a.empty() && std::all_of(a.begin(), a.end(), ::isdigit);
  const bool nb = !b.empty() && std::all_of(b.begin(), b.end(), ::isdigit);
  if (na != nb) return na;
  if (na && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

std::string nodeName(const ComfyNode& node) { return "node " + node.id + " (" + node.type + ")"; }

void readUiNode(const Json& node, const std::map<long long, ComfyLink>& links, const std::string& source, ComfyGraph& graph) {
  if (!node.is_object() || !node.contains("id")) fail(source, "a node of \"nodes\" has no id");
  ComfyNode n;
  n.id = idText(node["id"]);
  if (!node.contains("type") || !node["type"].is_string()) fail(source, "node " + n.id + " has no type");
  n.type = node["type"].get<std::string>();
  if (node.contains("title") && node["title"].is_string()) n.title = node["title"].get<std::string>();
  if (node.contains("inputs") && node["inputs"].is_array())
    for (const Json& input : node["inputs"]) {
      if (!input.is_object() || !input.contains("name") || !input.contains("link") || input["link"].is_null()) continue;
      const auto found = links.find(input["link"].get<long long>());
      if (found == links.end())
        fail(source, nodeName(n) + ": input \"" + input["name"].get<std::string>() + "\" names link " +
                         input["link"].dump() + ", which \"links\" does not have");
      n.links[input["name"].get<std::string>()] = found->second;
    }
  if (node.contains("widgets_values")) {
    const Json& widgets = node["widgets_values"];
    if (widgets.is_object()) {
      for (const auto& [name, value] : widgets.items()) n.values[name] = value;
    } else if (widgets.is_array()) {
      const std::vector<std::string>& names = comfyWidgetNames(n.type);
      for (std::size_t i = 0; i < widgets.size(); ++i)
        n.values[i < names.size() ? names[i] : "widget_" + std::to_string(i)] = widgets[i];
    }
  }
  if (graph.nodes.count(n.id)) fail(source, "two nodes have the id " + n.id);
  graph.nodes[n.id] = std::move(n);
}

void readUi(const Json& doc, const std::string& source, ComfyGraph& graph) {
  std::map<long long, ComfyLink> links;
  if (doc.contains("links") && doc["links"].is_array())
    for (const Json& link : doc["links"]) {
      // [link id, from node, from slot, to node, to slot, type]; newer files may write objects.
      if (link.is_array() && link.size() >= 5)
        links[link[0].get<long long>()] = {idText(link[1]), link[2].get<int>()};
      else if (link.is_object() && link.contains("id"))
        links[link["id"].get<long long>()] = {idText(link.at("origin_id")), link.at("origin_slot").get<int>()};
    }
  for (const Json& node : doc["nodes"]) readUiNode(node, links, source, graph);
}

bool isLink(const Json& value) {
  return value.is_array() && value.size() == 2 && (value[0].is_string() || value[0].is_number_integer()) &&
         value[1].is_number_integer();
}

void readApi(const Json& doc, const std::string& source, ComfyGraph& graph) {
  for (const auto& [id, node] : doc.items()) {
    if (!node.is_object() || !node.contains("class_type") || !node["class_type"].is_string())
      fail(source, "node " + id + " has no class_type (neither ComfyUI format)");
    ComfyNode n;
    n.id = id;
    n.type = node["class_type"].get<std::string>();
    if (node.contains("_meta") && node["_meta"].contains("title") && node["_meta"]["title"].is_string())
      n.title = node["_meta"]["title"].get<std::string>();
    if (node.contains("inputs") && node["inputs"].is_object())
      for (const auto& [name, value] : node["inputs"].items()) {
        if (isLink(value)) n.links[name] = {idText(value[0]), value[1].get<int>()};
        else n.values[name] = value;
      }
    graph.nodes[id] = std::move(n);
  }
}

void sortTopologically(const std::string& source, ComfyGraph& graph) {
  std::map<std::string, std::set<std::string>> feeds;  // node → the nodes it needs
  for (const auto& [id, node] : graph.nodes)
    for (const auto& [input, link] : node.links) {
      if (!graph.nodes.count(link.node))
        fail(source, nodeName(node) + ": input \"" + input + "\" is linked to node " + link.node + ", which the workflow does not have");
      feeds[id].insert(link.node);
    }
  std::vector<std::string> ids;
  for (const auto& [id, node] : graph.nodes) ids.push_back(id);
  std::sort(ids.begin(), ids.end(), idLess);
  std::set<std::string> placed;
  while (placed.size() < ids.size()) {
    bool progressed = false;
    for (const std::string& id : ids) {
      if (placed.count(id)) continue;
      const auto& needs = feeds[id];
      if (!std::all_of(needs.begin(), needs.end(), [&](const std::string& n) { return placed.count(n) > 0; })) continue;
      graph.order.push_back(id);
      placed.insert(id);
      progressed = true;
      break;  // restart so the smallest ready id always goes next
    }
    if (!progressed) {
      for (const std::string& id : ids)
        if (!placed.count(id)) fail(source, "the workflow has a cycle through " + nodeName(graph.nodes.at(id)));
    }
  }
}

}  // namespace

const Json* ComfyNode::value(const std::string& name) const {
  const auto found = values.find(name);
  return found == values.end() ? nullptr : &found->second;
}

std::optional<ComfyLink> ComfyNode::link(const std::string& name) const {
  const auto found = links.find(name);
  if (found == links.end()) return std::nullopt;
  return found->second;
}

const ComfyNode* ComfyGraph::find(const std::string& id) const {
  const auto found = nodes.find(id);
  return found == nodes.end() ? nullptr : &found->second;
}

std::vector<std::string> ComfyGraph::consumers(const std::string& id) const {
  std::vector<std::string> out;
  for (const std::string& other : order)
    for (const auto& [input, link] : nodes.at(other).links)
      if (link.node == id) {
        out.push_back(other);
        break;
      }
  return out;
}

const std::vector<std::string>& comfyWidgetNames(const std::string& type) {
  static const std::map<std::string, std::vector<std::string>> names = {
      {"KSampler", {"seed", "control_after_generate", "steps", "cfg", "sampler_name", "scheduler", "denoise"}},
      {"KSamplerAdvanced",
       {"add_noise", "noise_seed", "control_after_generate", "steps", "cfg", "sampler_name", "scheduler", "start_at_step",
        "end_at_step", "return_with_leftover_noise"}},
      {"CLIPTextEncode", {"text"}},
      {"UNETLoader", {"unet_name", "weight_dtype"}},
      {"CLIPLoader", {"clip_name", "type", "device"}},
      {"VAELoader", {"vae_name"}},
      {"EmptyHunyuanLatentVideo", {"width", "height", "length", "batch_size"}},
      {"EmptyMochiLatentVideo", {"width", "height", "length", "batch_size"}},
      {"Wan22ImageToVideoLatent", {"width", "height", "length", "batch_size"}},
      {"CreateVideo", {"fps"}},
      {"EmptyLatentImage", {"width", "height", "batch_size"}},
      {"EmptySD3LatentImage", {"width", "height", "batch_size"}},
      {"ModelSamplingSD3", {"shift"}},
      {"LoadImage", {"image", "upload"}},
      {"ZeroCopyVRAMPin", {"enable_pinning", "tune_allocator"}},
      {"ZeroCopyLatentStore", {"buffer_tag"}},
      {"ZeroCopyLatentHandoff",
       {"prompt", "width", "height", "length", "buffer_tag", "continuity_mode", "blend_ratio"}},
  };
  static const std::vector<std::string> none;
  const auto found = names.find(type);
  return found == names.end() ? none : found->second;
}

ComfyGraph parseComfyGraph(const std::string& text, const std::string& source) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& error) {
    fail(source, std::string("not JSON: ") + error.what());
  }
  if (!doc.is_object()) fail(source, "a ComfyUI workflow is a JSON object");
  ComfyGraph graph;
  try {
    if (doc.contains("nodes") && doc["nodes"].is_array()) {
      graph.format = ComfyFormat::Ui;
      readUi(doc, source, graph);
    } else {
      readApi(doc, source, graph);
    }
  } catch (const Json::exception& error) {
    fail(source, std::string("malformed workflow: ") + error.what());
  }
  if (graph.nodes.empty()) fail(source, "the workflow has no nodes");
  sortTopologically(source, graph);
  return graph;
}

}  // namespace shotchain::interop
