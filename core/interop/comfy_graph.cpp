#include "interop/comfy_graph.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <set>
#include <stdexcept>

#include "io/strict_json.h"

namespace shotchain::interop {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw std::runtime_error(source + ": " + what);
}

// A node id: ComfyUI writes whole numbers (UI format) or text (API format).
std::string idText(const std::string& source, const std::string& where, const Json& id) {
  if (id.is_string()) return id.get<std::string>();
  if (id.is_number_unsigned()) return std::to_string(id.get<std::uint64_t>());
  if (id.is_number_integer()) return std::to_string(id.get<std::int64_t>());
  fail(source, where + " is " + shortJson(id) + "; a node id is a whole number or text");
}

// A link id or slot: a whole number from 0 to 2^31-1.
long long wholeNumber(const std::string& source, const std::string& where, const Json& value) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() <= 0x7fffffffu) return value.get<long long>();
  fail(source, where + " is " + shortJson(value) + "; it must be a whole number from 0 to 2147483647");
}

// Numeric ids in numeric order, then the rest by text.
bool idLess(const std::string& a, const std::string& b) {
  const bool na = !a.empty() && std::all_of(a.begin(), a.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  const bool nb = !b.empty() && std::all_of(b.begin(), b.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  if (na != nb) return na;
  if (na && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

std::string nodeName(const ComfyNode& node) { return "node " + node.id + " (" + node.type + ")"; }

const Json* member(const Json& object, const char* name) {
  const auto found = object.find(name);
  return found == object.end() ? nullptr : &*found;
}

void readUiNode(const Json& node, std::size_t index, const std::map<long long, ComfyLink>& links,
                const std::string& source, const FamilyNodeTypes& familyTypes, ComfyGraph& graph) {
  const std::string where = "nodes[" + std::to_string(index) + "]";
  if (!node.is_object()) fail(source, where + " is " + shortJson(node) + ", not a node object");
  const Json* id = member(node, "id");
  if (!id) fail(source, where + " has no id");
  ComfyNode n;
  n.id = idText(source, where + ".id", *id);
  const Json* type = member(node, "type");
  if (!type || !type->is_string()) fail(source, "node " + n.id + " has no type");
  n.type = type->get<std::string>();
  if (const Json* title = member(node, "title"); title && title->is_string()) n.title = title->get<std::string>();
  if (const Json* inputs = member(node, "inputs"); inputs && inputs->is_array())
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      const Json& input = (*inputs)[i];
      if (!input.is_object()) continue;
      const Json* link = member(input, "link");
      if (!link || link->is_null()) continue;
      const Json* name = member(input, "name");
      const std::string field = nodeName(n) + ": inputs[" + std::to_string(i) + "]";
      if (!name || !name->is_string()) fail(source, field + " has no name");
      const long long linkId = wholeNumber(source, field + ".link", *link);
      const auto found = links.find(linkId);
      if (found == links.end())
        fail(source, nodeName(n) + ": input \"" + name->get<std::string>() + "\" names link " + std::to_string(linkId) +
                         ", which \"links\" does not have");
      n.links[name->get<std::string>()] = found->second;
    }
  if (const Json* widgets = member(node, "widgets_values")) {
    if (widgets->is_object()) {
      for (const auto& [name, value] : widgets->items()) n.values[name] = value;
    } else if (widgets->is_array()) {
      const std::vector<std::string>& names = comfyWidgetNames(n.type, familyTypes);
      for (std::size_t i = 0; i < widgets->size(); ++i)
        n.values[i < names.size() ? names[i] : "widget_" + std::to_string(i)] = (*widgets)[i];
    }
  }
  if (graph.nodes.count(n.id)) fail(source, "two nodes have the id " + n.id);
  graph.nodes[n.id] = std::move(n);
}

void readUi(const Json& doc, const std::string& source, const FamilyNodeTypes& familyTypes, ComfyGraph& graph) {
  std::map<long long, ComfyLink> links;
  if (const Json* table = member(doc, "links"); table && table->is_array())
    for (std::size_t i = 0; i < table->size(); ++i) {
      const Json& link = (*table)[i];
      const std::string where = "links[" + std::to_string(i) + "]";
      // [link id, from node, from slot, to node, to slot, type]; newer files may write objects.
      long long id = 0;
      ComfyLink to;
      if (link.is_array() && link.size() >= 5) {
        id = wholeNumber(source, where + "[0] (the link id)", link[0]);
        to = {idText(source, where + "[1] (the source node)", link[1]),
              static_cast<int>(wholeNumber(source, where + "[2] (the source slot)", link[2]))};
      } else if (link.is_object() && member(link, "id")) {
        const Json* origin = member(link, "origin_id");
        const Json* slot = member(link, "origin_slot");
        if (!origin || !slot) fail(source, where + " has no origin_id or origin_slot");
        id = wholeNumber(source, where + ".id", link["id"]);
        to = {idText(source, where + ".origin_id", *origin),
              static_cast<int>(wholeNumber(source, where + ".origin_slot", *slot))};
      } else {
        fail(source,
             where + " is " + shortJson(link) + ", neither [id, node, slot, node, slot, type] nor a link object");
      }
      if (!links.emplace(id, to).second) fail(source, where + ": two links have the id " + std::to_string(id));
    }
  const Json& nodes = doc["nodes"];
  for (std::size_t i = 0; i < nodes.size(); ++i) readUiNode(nodes[i], i, links, source, familyTypes, graph);
}

bool isLink(const Json& value) {
  return value.is_array() && value.size() == 2 && (value[0].is_string() || value[0].is_number_integer()) &&
         value[1].is_number_integer();
}

void readApi(const Json& doc, const std::string& source, ComfyGraph& graph) {
  for (const auto& [id, node] : doc.items()) {
    const Json* type = node.is_object() ? member(node, "class_type") : nullptr;
    if (!type || !type->is_string()) fail(source, "node " + id + " has no class_type (neither ComfyUI format)");
    ComfyNode n;
    n.id = id;
    n.type = type->get<std::string>();
    if (const Json* meta = member(node, "_meta"); meta && meta->is_object())
      if (const Json* title = member(*meta, "title"); title && title->is_string()) n.title = title->get<std::string>();
    if (const Json* inputs = member(node, "inputs"); inputs && inputs->is_object())
      for (const auto& [name, value] : inputs->items()) {
        if (isLink(value))
          n.links[name] = {
              idText(source, "node " + id + ": input \"" + name + "\"", value[0]),
              static_cast<int>(wholeNumber(source, "node " + id + ": input \"" + name + "\" slot", value[1]))};
        else
          n.values[name] = value;
      }
    graph.nodes[id] = std::move(n);
  }
}

// Kahn's sort with the smallest ready id first: every node after the nodes feeding it, ties by id,
// in O(nodes + links) heap operations. Also fills the consumer lists, in that order.
void sortTopologically(const std::string& source, ComfyGraph& graph) {
  std::vector<std::string> ids;
  ids.reserve(graph.nodes.size());
  for (const auto& [id, node] : graph.nodes) ids.push_back(id);
  std::sort(ids.begin(), ids.end(), idLess);
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < ids.size(); ++i) rank.emplace(ids[i], i);
  std::vector<std::vector<std::size_t>> fed(ids.size());  // node → the nodes it feeds
  std::vector<std::size_t> waiting(ids.size(), 0);        // node → how many distinct nodes it still needs
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const ComfyNode& node = graph.nodes.at(ids[i]);
    std::set<std::size_t> needs;
    for (const auto& [input, link] : node.links) {
      const auto from = rank.find(link.node);
      if (from == rank.end())
        fail(source, nodeName(node) + ": input \"" + input + "\" is linked to node " + link.node +
                         ", which the workflow does not have");
      needs.insert(from->second);
    }
    waiting[i] = needs.size();
    for (std::size_t from : needs) fed[from].push_back(i);
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<std::size_t> position(ids.size(), 0);
  graph.order.reserve(ids.size());
  while (!ready.empty()) {
    const std::size_t next = ready.top();
    ready.pop();
    position[next] = graph.order.size();
    graph.order.push_back(ids[next]);
    for (std::size_t to : fed[next])
      if (--waiting[to] == 0) ready.push(to);
  }
  if (graph.order.size() < ids.size())
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (waiting[i] > 0) fail(source, "the workflow has a cycle through " + nodeName(graph.nodes.at(ids[i])));
  for (std::size_t from = 0; from < ids.size(); ++from) {
    std::vector<std::size_t>& to = fed[from];
    std::sort(to.begin(), to.end(), [&](std::size_t a, std::size_t b) { return position[a] < position[b]; });
    std::vector<std::string>& names = graph.consumerIds[ids[from]];
    for (std::size_t i : to) names.push_back(ids[i]);
  }
}

}  // namespace

std::string shortJson(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() <= 60 ? text : text.substr(0, 60) + "…";
}

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

const std::vector<std::string>& ComfyGraph::consumers(const std::string& id) const {
  static const std::vector<std::string> none;
  const auto found = consumerIds.find(id);
  return found == consumerIds.end() ? none : found->second;
}

const std::vector<std::string>& ggufUnetLoaderTypes() {
  static const std::vector<std::string> types{"UnetLoaderGGUF",
                                              "UnetLoaderGGUFAdvanced",
                                              "UnetLoaderGGUFMultiGPU",
                                              "UnetLoaderGGUFDisTorchMultiGPU",
                                              "UnetLoaderGGUFDisTorch2MultiGPU",
                                              "UnetLoaderGGUFAdvancedMultiGPU",
                                              "UnetLoaderGGUFAdvancedDisTorchMultiGPU",
                                              "UnetLoaderGGUFAdvancedDisTorch2MultiGPU"};
  return types;
}

bool isGgufUnetLoader(const std::string& type) {
  const auto& types = ggufUnetLoaderTypes();
  return std::find(types.begin(), types.end(), type) != types.end();
}

const std::vector<std::string>& comfyWidgetNames(const std::string& type, const FamilyNodeTypes& familyTypes) {
  static const std::vector<std::string> videoLatent{"width", "height", "length", "batch_size"};
  static const std::vector<std::string> motion{"length", "motion_latent_count"};
  const auto among = [&](const std::vector<std::string>& types) {
    return std::find(types.begin(), types.end(), type) != types.end();
  };
  if (among(familyTypes.videoLatents)) return videoLatent;
  if (among(familyTypes.motion)) return motion;
  static const std::map<std::string, std::vector<std::string>> names = {
      {"KSampler", {"seed", "control_after_generate", "steps", "cfg", "sampler_name", "scheduler", "denoise"}},
      {"KSamplerAdvanced",
       {"add_noise", "noise_seed", "control_after_generate", "steps", "cfg", "sampler_name", "scheduler",
        "start_at_step", "end_at_step", "return_with_leftover_noise"}},
      {"CLIPTextEncode", {"text"}},
      {"UNETLoader", {"unet_name", "weight_dtype"}},
      // ComfyUI-GGUF's loaders, and ComfyUI-MultiGPU's copies of them (their own fields follow, unnamed here).
      {"UnetLoaderGGUF", {"unet_name"}},
      {"UnetLoaderGGUFAdvanced", {"unet_name", "dequant_dtype", "patch_dtype", "patch_on_device"}},
      {"UnetLoaderGGUFMultiGPU", {"unet_name", "device"}},
      {"UnetLoaderGGUFDisTorchMultiGPU", {"unet_name"}},
      {"UnetLoaderGGUFDisTorch2MultiGPU", {"unet_name"}},
      {"UnetLoaderGGUFAdvancedMultiGPU", {"unet_name", "dequant_dtype", "patch_dtype", "patch_on_device"}},
      {"UnetLoaderGGUFAdvancedDisTorchMultiGPU", {"unet_name", "dequant_dtype", "patch_dtype", "patch_on_device"}},
      {"UnetLoaderGGUFAdvancedDisTorch2MultiGPU", {"unet_name", "dequant_dtype", "patch_dtype", "patch_on_device"}},
      {"CLIPLoader", {"clip_name", "type", "device"}},
      {"VAELoader", {"vae_name"}},
      {"CLIPVisionLoader", {"clip_name"}},
      {"CLIPVisionEncode", {"crop"}},
      {"EmptyHunyuanLatentVideo", {"width", "height", "length", "batch_size"}},
      {"EmptyMochiLatentVideo", {"width", "height", "length", "batch_size"}},
      {"LoraLoaderModelOnly", {"lora_name", "strength_model"}},
      {"LoraLoader", {"lora_name", "strength_model", "strength_clip"}},
      {"SaveVideo", {"filename_prefix", "format", "codec"}},
      {"CreateVideo", {"fps"}},
      {"EmptyLatentImage", {"width", "height", "batch_size"}},
      {"EmptySD3LatentImage", {"width", "height", "batch_size"}},
      {"ModelSamplingSD3", {"shift"}},
      {"LoadImage", {"image", "upload"}},
      {"ZeroCopyVRAMPin", {"enable_pinning", "tune_allocator"}},
      {"ZeroCopyLatentStore", {"buffer_tag"}},
      {"ImageScale", {"upscale_method", "width", "height", "crop"}},
      {"ImageResizeKJv2",
       {"width", "height", "upscale_method", "keep_proportion", "pad_color", "crop_position", "divisible_by",
        "device"}},
      {"ImageBatchExtendWithOverlap", {"overlap", "overlap_side", "overlap_mode"}},
      {"LoadLatent", {"latent"}},
      {"SaveLatent", {"filename_prefix"}},
      {"ZeroCopyLatentHandoff",
       {"prompt", "width", "height", "length", "buffer_tag", "continuity_mode", "blend_ratio"}},
  };
  static const std::vector<std::string> none;
  const auto found = names.find(type);
  return found == names.end() ? none : found->second;
}

ComfyGraph parseComfyGraph(const std::string& text, const std::string& source, const FamilyNodeTypes& familyTypes) {
  Json doc;
  try {
    doc = io::parseJsonChecked<Json>(text, io::kMaxJsonDepth);
  } catch (const io::JsonRefused& error) {
    fail(source, std::string("not JSON ComfyUI can have written: ") + error.what());
  }
  if (!doc.is_object()) fail(source, "a ComfyUI workflow is a JSON object");
  ComfyGraph graph;
  const Json* nodes = member(doc, "nodes");
  if (nodes && nodes->is_array()) {
    graph.format = ComfyFormat::Ui;
    readUi(doc, source, familyTypes, graph);
  } else {
    readApi(doc, source, graph);
  }
  if (graph.nodes.empty()) fail(source, "the workflow has no nodes");
  sortTopologically(source, graph);
  return graph;
}

}  // namespace shotchain::interop
