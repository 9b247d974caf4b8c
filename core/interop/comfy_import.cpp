#include "interop/comfy_import.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "interop/comfy_model_words.h"
#include "sequence/validation.h"

namespace shotchain::interop {
namespace {

using Json = nlohmann::json;
using namespace limits;

const std::set<std::string> kSamplers = {"KSampler", "KSamplerAdvanced"};
const std::set<std::string> kEmptyLatents = {"EmptyHunyuanLatentVideo", "EmptyMochiLatentVideo", "EmptyLatentImage",
                                             "EmptySD3LatentImage"};
const std::set<std::string> kPictureScalers = {"ImageScale", "ImageResizeKJv2"};
const std::set<std::string> kOutputs = {"SaveImage", "PreviewImage", "SaveAnimatedWEBP", "SaveAnimatedPNG",
                                        "SaveWEBM",  "SaveVideo",    "CreateVideo",      "VHS_VideoCombine"};

std::string nodeLabel(const ComfyNode& node) { return node.type + " " + node.id; }

// The families' latent node types that take a start image, their image-to-video nodes and their motion nodes.
FamilyNodeTypes familyNodeTypes(const std::vector<models::ComfyWords>& families) {
  FamilyNodeTypes types;
  for (const models::ComfyWords& words : families) {
    if (words.latentTakesStartImage && *words.latentNode) types.videoLatents.push_back(words.latentNode);
    if (*words.imageToVideoNode) types.videoLatents.push_back(words.imageToVideoNode);
    if (*words.firstLastFrameNode) types.videoLatents.push_back(words.firstLastFrameNode);
    if (*words.motionNode) types.motion.push_back(words.motionNode);
  }
  return types;
}

std::string plain(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

class Importer {
 public:
  Importer(const ComfyGraph& graph, std::string source, const ComfyImportOptions& options)
      : graph_(graph), source_(std::move(source)), options_(options) {}

  ComfyImport run() {
    out_.format = graph_.format;
    out_.sequence.settings.name = "Imported ComfyUI workflow";
    for (const std::string& id : graph_.order) {
      const ComfyNode& node = graph_.nodes.at(id);
      if (kSamplers.count(node.type)) importSampler(node);
    }
    if (out_.sequence.shots.empty() && !out_.problems.empty()) {
      std::string all;
      for (const std::string& problem : out_.problems) all += (all.empty() ? "" : "; ") + problem;
      // Every node of a type that does not carry over, not only the first each sampler met.
      const std::vector<std::string> mapped = mappedComfyNodeTypes(options_.families);
      std::string left;
      for (const auto& [id, node] : graph_.nodes)
        if (!kOutputs.count(node.type) && node.type != "Note" && node.type != "MarkdownNote" &&
            std::find(mapped.begin(), mapped.end(), node.type) == mapped.end())
          left += (left.empty() ? "" : ", ") + nodeLabel(node);
      fail("no shot could be imported: " + all + (left.empty() ? "" : "; node types ShotChain does not map: " + left));
    }
    if (out_.sequence.shots.empty()) fail("the workflow has no KSampler or KSamplerAdvanced node: nothing to render");
    settleSamplerDefaults();
    resolveModels();
    out_.models = describeImportedModels(out_.sequence.settings.model, options_.readModelFile, options_.familyFromName);
    out_.unmapped = unmappedNodes();
    return std::move(out_);
  }

 private:
  // The nodes no shot took, each with why.
  std::vector<UnmappedNode> unmappedNodes() const {
    std::vector<UnmappedNode> out;
    const std::vector<std::string> mapped = mappedComfyNodeTypes(options_.families);
    for (const std::string& id : graph_.order) {
      const ComfyNode& node = graph_.nodes.at(id);
      if (used_.count(id)) continue;
      std::string why = "not connected to a sampler";
      if (kOutputs.count(node.type))
        why = "the render writes PNG frames, an MP4 and an OTIO timeline instead";
      else if (node.type == "Note" || node.type == "MarkdownNote")
        why = "a note";
      else if (std::find(mapped.begin(), mapped.end(), node.type) == mapped.end())
        why = "a node type ShotChain does not map";
      out.push_back({node.id, node.type, why});
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(source_ + ": " + what); }

  // One sampler becomes a shot (or the second half of a two-expert one). When it cannot, it is left out
  // with what stopped it, and so is the first half of its pair; the shots before it stay as they were
  // (a sampler adds its shot last, and a second half changes nothing of the first before it throws).
  void importSampler(const ComfyNode& node) {
    const std::size_t shots = out_.sequence.shots.size();
    const std::size_t notes = out_.notes.size();
    std::string firstHalf;
    try {
      const ComfyNode* from = upstream(node, "latent_image");
      if (from && kSamplers.count(from->type)) {
        firstHalf = from->id;
        secondStage(node, *from);
      } else {
        shotOf(node);
      }
    } catch (const std::runtime_error& error) {
      out_.sequence.shots.resize(shots);
      out_.notes.resize(notes);
      std::erase_if(samplerShot_, [&](const auto& entry) { return entry.second >= shots; });
      std::string why = error.what();
      if (why.rfind(source_ + ": ", 0) == 0) why.erase(0, source_.size() + 2);
      if (why.rfind(nodeLabel(node) + ": ", 0) != 0) why = nodeLabel(node) + ": " + why;
      if (const auto stage = firstStages_.find(firstHalf); stage != firstStages_.end()) {
        const std::size_t erased = stage->second.shot;
        out_.sequence.shots.erase(out_.sequence.shots.begin() + static_cast<std::ptrdiff_t>(erased));
        for (auto& [id, other] : firstStages_)
          if (other.shot > erased) --other.shot;
        std::map<std::string, std::size_t> kept;
        for (const auto& [id, index] : samplerShot_)
          if (index != erased) kept[id] = index > erased ? index - 1 : index;
        samplerShot_ = std::move(kept);
        firstStages_.erase(stage);
        why += " (and " + nodeLabel(graph_.nodes.at(firstHalf)) + ", the first half of its pair, with it)";
      }
      out_.problems.push_back(why);
      used_.insert(node.id);  // listed in problems, not again among the nodes nothing maps
    }
  }

  // The node feeding `input` of `node`, through UI reroutes; null when the input is not linked.
  const ComfyNode* upstream(const ComfyNode& node, const std::string& input) {
    std::optional<ComfyLink> link = node.link(input);
    while (link) {
      const ComfyNode* from = graph_.find(link->node);
      if (!from) return nullptr;
      used_.insert(from->id);
      if (from->type != "Reroute") return from;
      link = from->links.empty() ? std::nullopt : std::optional<ComfyLink>(from->links.begin()->second);
    }
    return nullptr;
  }

  const Json& required(const ComfyNode& node, const std::string& name) const {
    const Json* value = node.value(name);
    if (!value) {
      if (node.link(name))
        fail(nodeLabel(node) + ": \"" + name +
             "\" comes from another node; ShotChain reads it only as a value on the node");
      fail(nodeLabel(node) + ": no \"" + name + "\"");
    }
    return *value;
  }
  double number(const ComfyNode& node, const std::string& name) const {
    const Json& v = required(node, name);
    if (!v.is_number()) fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(v) + ", not a number");
    return v.get<double>();
  }
  // A number the document keeps, checked against the document's own range before it becomes a field.
  double number(const ComfyNode& node, const std::string& name, double lo, double hi) const {
    const double v = number(node, name);
    if (!(v >= lo && v <= hi))
      fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(required(node, name)) + "; it must be from " +
           plain(lo) + " to " + plain(hi));
    return v;
  }
  int whole(const ComfyNode& node, const std::string& name, int lo, int hi) const {
    const Json& v = required(node, name);
    const bool integral =
        v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
    const double d = v.is_number() ? v.get<double>() : 0.0;
    if (!integral || !(d >= lo && d <= hi))
      fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(v) + "; it must be a whole number from " +
           std::to_string(lo) + " to " + std::to_string(hi));
    return static_cast<int>(d);
  }
  // ComfyUI's seeds are 0 .. 2^64-1, read exactly (never through a double).
  std::uint64_t seedOf(const ComfyNode& node, const std::string& name) const {
    const Json& v = required(node, name);
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::floor(d) == d && d >= 0 && d <= 9007199254740992.0) return static_cast<std::uint64_t>(d);
    }
    fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(v) +
         "; a seed is a whole number from 0 to 18446744073709551615");
  }
  bool flag(const ComfyNode& node, const std::string& name) const {
    const Json& v = required(node, name);
    if (!v.is_boolean()) fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(v) + ", not true or false");
    return v.get<bool>();
  }
  // A file a loader names: under its models (or input) folder, never above it or elsewhere.
  std::string fileName(const ComfyNode& node, const std::string& name) const {
    std::string file = text(node, name);
    if (file.rfind("builtin:", 0) == 0) return file;
    std::replace(file.begin(), file.end(), '\\', '/');  // ComfyUI on Windows writes subfolders with backslashes
    const std::filesystem::path path(file);
    bool leaves = file.empty() || path.has_root_path() || (file.size() > 1 && file[1] == ':');
    for (const std::filesystem::path& part : path) leaves = leaves || part == "..";
    if (leaves)
      fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(required(node, name)) +
           ", which is not a file name inside a ComfyUI folder (no absolute path, no \"..\")");
    return file;
  }
  std::string text(const ComfyNode& node, const std::string& name) const {
    const Json& v = required(node, name);
    if (!v.is_string()) fail(nodeLabel(node) + ": \"" + name + "\" is " + shortJson(v) + ", not text");
    return v.get<std::string>();
  }
  bool isImageLatent(const std::string& type) const {
    return std::any_of(options_.families.begin(), options_.families.end(),
                       [&](const models::ComfyWords& w) { return w.latentTakesStartImage && type == w.latentNode; });
  }
  bool isImageToVideo(const std::string& type) const {
    return std::any_of(options_.families.begin(), options_.families.end(), [&](const models::ComfyWords& w) {
      return (*w.imageToVideoNode && type == w.imageToVideoNode) ||
             (*w.firstLastFrameNode && type == w.firstLastFrameNode);
    });
  }

  bool isMotionNode(const std::string& type) const {
    return std::any_of(options_.families.begin(), options_.families.end(),
                       [&](const models::ComfyWords& w) { return *w.motionNode && type == w.motionNode; });
  }

  [[noreturn]] void cannotMap(const ComfyNode& into, const std::string& input, const ComfyNode& from) const {
    fail(nodeLabel(into) + ": its \"" + input + "\" comes from " + nodeLabel(from) +
         ", a node type ShotChain cannot map there");
  }

  std::string promptOf(const ComfyNode& sampler, const std::string& input, Shot& shot) {
    const ComfyNode* from = upstream(sampler, input);
    if (!from) return "";
    if (from->type == "CLIPTextEncode") {
      const ComfyNode* clip = upstream(*from, "clip");
      while (clip && clip->type == "LoraLoader")
        clip = upstream(*clip, "clip");  // its text-encoder side is not applied
      if (clip) clipLoader(*clip);
      return text(*from, "text");
    }
    if (from->type == "ZeroCopyLatentHandoff") {
      handoff(*from, shot);
      return text(*from, "prompt");
    }
    if (isImageToVideo(from->type) ||
        isMotionNode(from->type)) {  // outputs 0 and 1 are its positive and negative, passed through
      const std::optional<ComfyLink> link = sampler.link(input);
      return promptOf(*from, link && link->slot == 1 ? "negative" : "positive", shot);
    }
    cannotMap(sampler, input, *from);
  }

  void clipLoader(const ComfyNode& node) {
    if (node.type != "CLIPLoader") fail(nodeLabel(node) + ": a text encoder must come from a CLIPLoader here");
    textEncoder_ = fileName(node, "clip_name");
    const Json* type = node.value("type");
    const auto known = [&](const models::ComfyWords& words) { return type->get<std::string>() == words.clipType; };
    if (type && type->is_string() && std::none_of(options_.families.begin(), options_.families.end(), known))
      out_.notes.push_back(
          nodeLabel(node) + ": type \"" + type->get<std::string>() +
          "\" is not one of the model families' text encoders; the file is read as what its header says");
  }

  void vaeLoader(const ComfyNode& node) {
    if (node.type != "VAELoader") fail(nodeLabel(node) + ": a VAE must come from a VAELoader here");
    vae_ = fileName(node, "vae_name");
  }

  // The sampler's model chain into `shot` (shift, LoRAs, pinning); returns its UNETLoader's file.
  std::string modelChain(const ComfyNode& sampler, Shot& shot) {
    const ComfyNode* node = upstream(sampler, "model");
    const ComfyNode* into = &sampler;
    std::string input = "model";
    while (node) {
      if (node->type == "UNETLoader") {
        const std::string name = fileName(*node, "unet_name");
        if (const Json* dtype = node->value("weight_dtype");
            dtype && dtype->is_string() && dtype->get<std::string>() != "default")
          out_.notes.push_back(nodeLabel(*node) + ": weight_dtype " + dtype->get<std::string>() +
                               " left to the memory plan (it picks the dtype from the file and the budget)");
        return name;
      }
      if (isGgufUnetLoader(node->type)) {
        std::vector<std::string> others;
        for (const auto& [field, value] : node->values)
          if (field != "unet_name" && !(value.is_string() && value.get<std::string>() == "default") &&
              !(value.is_boolean() && !value.get<bool>()))
            others.push_back(field);
        if (!others.empty()) {
          std::string list;
          for (const std::string& field : others) list += (list.empty() ? "" : ", ") + field;
          out_.notes.push_back(nodeLabel(*node) + ": " + list +
                               " left to the memory plan (GGUF blocks stay as stored and are dequantised layer by "
                               "layer)");
        }
        return fileName(*node, "unet_name");
      }
      if (node->type == "ModelSamplingSD3")
        shot.shift = number(*node, "shift", kMinShift, kMaxShift);
      else if (node->type == "LoraLoaderModelOnly" || node->type == "LoraLoader") {
        LoraRef lora;
        lora.file = loraFile(fileName(*node, "lora_name"));
        lora.strength = number(*node, "strength_model", -limits::kMaxLoraStrength, limits::kMaxLoraStrength);
        if (!shot.loras) shot.loras = std::vector<LoraRef>{};
        shot.loras->insert(shot.loras->begin(), lora);  // walking up from the sampler: the loader's side first
        if (node->type == "LoraLoader" && node->value("strength_clip") && number(*node, "strength_clip") != 0.0)
          out_.notes.push_back(nodeLabel(*node) + ": strength_clip is not applied (ShotChain patches the DiT only)");
      } else if (node->type == "ZeroCopyVRAMPin") {
        if (!node->value("enable_pinning") || flag(*node, "enable_pinning"))
          out_.sequence.settings.policy = ResidencyPolicy::Pinned;
        if (node->value("tune_allocator")) out_.sequence.settings.allocatorTuning = flag(*node, "tune_allocator");
      } else {
        cannotMap(*into, input, *node);
      }
      into = node;
      node = upstream(*node, "model");
    }
    fail(nodeLabel(sampler) + ": its model does not come from a UNETLoader or UnetLoaderGGUF");
  }

  void handoff(const ComfyNode& node, Shot& shot) {
    if (handoffDone_.count(node.id)) return;
    handoffDone_.insert(node.id);
    size(node, shot);
    shot.frames = whole(node, "length", 1, kMaxFrames);
    if (const Json* tag = node.value("buffer_tag"); tag && tag->is_string() && !tag->get<std::string>().empty())
      shot.continuity.tag = tag->get<std::string>();
    const std::string mode = node.value("continuity_mode") ? text(node, "continuity_mode") : "zero_copy_latent_only";
    if (mode == "zero_copy_latent_only") {
      shot.continuity.mode = ContinuityMode::Latent;
    } else if (mode == "blend_with_fallback") {
      shot.continuity.mode = ContinuityMode::Blend;
      if (node.value("blend_ratio")) shot.continuity.blendRatio = number(node, "blend_ratio", 0.0, 1.0);
    } else {
      fail(nodeLabel(node) + ": continuity_mode \"" + mode +
           "\" is neither zero_copy_latent_only nor blend_with_fallback");
    }
    if (const ComfyNode* image = upstream(node, "fallback_first_frame")) {
      if (image->type != "LoadImage") cannotMap(node, "fallback_first_frame", *image);
      shot.continuity.fallbackImage = fileName(*image, "image");
    }
    if (const ComfyNode* clip = upstream(node, "clip")) clipLoader(*clip);
    if (const ComfyNode* vae = upstream(node, "vae")) vaeLoader(*vae);
  }

  // A family's image latents (ComfyWords::latentTakesStartImage) and image-to-video nodes (whose image reaches the
  // experts through y): size, length, the VAE and the optional start image.
  void imageLatent(const ComfyNode& node, Shot& shot) {
    size(node, shot);
    shot.frames = whole(node, "length", 1, kMaxFrames);
    if (const ComfyNode* vae = upstream(node, "vae")) vaeLoader(*vae);
    if (const ComfyNode* image = upstream(node, "start_image")) {
      if (image->type != "LoadImage") cannotMap(node, "start_image", *image);
      shot.startImage = fileName(*image, "image");
      out_.notes.push_back(nodeLabel(node) +
                           ": the start image is resized with Lanczos and centre-cropped as the model's "
                           "reference code does (ComfyUI scales it bilinearly)");
    }
    if (const ComfyNode* image = upstream(node, "end_image")) {
      if (image->type != "LoadImage") cannotMap(node, "end_image", *image);
      shot.endImage = fileName(*image, "image");
    }
    for (const char* input : {"clip_vision_output", "clip_vision_start_image", "clip_vision_end_image"})
      if (const ComfyNode* vision = upstream(node, input)) clipVision(node, input, *vision);
    if (const Json* batch = node.value("batch_size"); batch && batch->is_number() && batch->get<double>() != 1)
      out_.notes.push_back(nodeLabel(node) + ": batch_size " + batch->dump() + " rendered as one clip");
  }

  // CLIPVisionEncode of a picture by a CLIPVisionLoader: the model set's image encoder (a DiT without image
  // tokens leaves it unused, and validate says so).
  void clipVision(const ComfyNode& into, const std::string& input, const ComfyNode& encode) {
    if (encode.type != "CLIPVisionEncode") cannotMap(into, input, encode);
    const ComfyNode* loader = upstream(encode, "clip_vision");
    if (!loader || loader->type != "CLIPVisionLoader")
      fail(nodeLabel(encode) + ": its clip_vision must come from a CLIPVisionLoader");
    imageEncoder_ = fileName(*loader, "clip_name");
    upstream(encode, "image");  // the picture the image-to-video node takes too
    if (const Json* crop = encode.value("crop"); crop && crop->is_string() && crop->get<std::string>() == "center")
      out_.notes.push_back(nodeLabel(encode) +
                           ": crop center: ShotChain gives CLIP the whole picture squashed to its size, as the "
                           "model's reference code does (ComfyUI crops the centre)");
  }

  // KJNodes' WanImageToVideoSVIPro: continuity svi. Its anchor_samples are a VAEEncode of the anchor picture (scaled
  // to the clip's size by an ImageScale or ImageResizeKJv2), its prev_samples the previous clip's sampler (or, in a
  // workflow of one clip, a LoadLatent of what that clip saved); without them the clip starts a chain.
  void sviLatent(const ComfyNode& node, Shot& shot) {
    shot.frames = whole(node, "length", 1, kMaxFrames);
    shot.continuity.mode = ContinuityMode::Svi;
    const ComfyNode* encode = upstream(node, "anchor_samples");
    if (!encode) fail(nodeLabel(node) + ": no anchor_samples (the latent of the chain's anchor picture)");
    if (encode->type != "VAEEncode") cannotMap(node, "anchor_samples", *encode);
    if (const ComfyNode* vae = upstream(*encode, "vae")) vaeLoader(*vae);
    const ComfyNode* picture = upstream(*encode, "pixels");
    const ComfyNode* into = encode;
    bool sized = false;
    for (; picture && kPictureScalers.count(picture->type); into = picture, picture = upstream(*picture, "image"))
      if (!sized) {
        size(*picture, shot);
        sized = true;
      }
    if (!picture) fail(nodeLabel(*into) + ": no picture (the SVI anchor comes from a LoadImage)");
    if (picture->type != "LoadImage") cannotMap(*into, into == encode ? "pixels" : "image", *picture);
    const std::string anchor = fileName(*picture, "image");
    const int motion = node.value("motion_latent_count") ? whole(node, "motion_latent_count", 0, 128) : 1;
    const ComfyNode* previous = upstream(node, "prev_samples");
    const Shot* before = out_.sequence.shots.empty() ? nullptr : &out_.sequence.shots.back();
    if (previous && motion > 0) {
      continuedClip(node, *previous);
      if (motion != 1) shot.continuity.motionLatents = motion;
    } else if (before) {
      shot.continuity.tag = "svi-" + node.id;  // a chain of its own: nothing hands into it
      out_.notes.push_back(nodeLabel(node) + ": no prev_samples: the clip starts a new SVI chain from its anchor");
    }
    const bool sameAnchor =
        before && before->continuity.mode == ContinuityMode::Svi &&
        (before->continuity.anchorImage.empty() ? before->startImage : before->continuity.anchorImage) == anchor;
    if (!(previous && motion > 0 && sameAnchor)) shot.continuity.anchorImage = anchor;
    if (sized) return;
    if (!before)
      fail(nodeLabel(*encode) +
           ": the anchor picture's size is not in the workflow; scale it with an ImageScale (or "
           "ImageResizeKJv2) to the clip's width and height before the VAEEncode");
    shot.width = before->width;
    shot.height = before->height;
  }

  // The clip an SVI clip continues: the previous shot of the sequence.
  void continuedClip(const ComfyNode& node, const ComfyNode& previous) {
    if (previous.type == "LoadLatent") {
      out_.notes.push_back(nodeLabel(node) + ": prev_samples from " + nodeLabel(previous) +
                           ": the clip continues the shot before it in the sequence, from its latents in memory");
      return;
    }
    if (!kSamplers.count(previous.type)) cannotMap(node, "prev_samples", previous);
    const auto found = samplerShot_.find(previous.id);
    if (found == samplerShot_.end())
      fail(nodeLabel(node) + ": its prev_samples come from " + nodeLabel(previous) +
           ", a sampler that is not an imported shot's last");
    if (found->second + 1 != out_.sequence.shots.size())
      out_.notes.push_back(nodeLabel(node) + ": its prev_samples come from shot " + std::to_string(found->second + 1) +
                           "; ShotChain continues the shot before it in the sequence");
  }

  void size(const ComfyNode& node, Shot& shot) const {
    shot.width = whole(node, "width", kMinSide, kMaxSide);
    shot.height = whole(node, "height", kMinSide, kMaxSide);
  }

  void latentOf(const ComfyNode& sampler, Shot& shot) {
    const ComfyNode* from = upstream(sampler, "latent_image");
    if (!from) fail(nodeLabel(sampler) + ": no latent_image");
    if (from->type == "ZeroCopyLatentHandoff") return handoff(*from, shot);
    if (isImageLatent(from->type) || isImageToVideo(from->type)) return imageLatent(*from, shot);
    if (isMotionNode(from->type)) return sviLatent(*from, shot);
    if (!kEmptyLatents.count(from->type)) cannotMap(sampler, "latent_image", *from);
    size(*from, shot);
    shot.frames = from->value("length") ? whole(*from, "length", 1, kMaxFrames) : 1;
    if (const Json* batch = from->value("batch_size"); batch && batch->is_number() && batch->get<double>() != 1)
      out_.notes.push_back(nodeLabel(*from) + ": batch_size " + batch->dump() + " rendered as one clip");
  }

  // Where the sampler's result goes: a ZeroCopyLatentStore's tag, the VAE of its VAEDecode.
  void downstream(const ComfyNode& sampler, Shot& shot) {
    for (const std::string& id : graph_.consumers(sampler.id)) {
      const ComfyNode& next = graph_.nodes.at(id);
      if (next.type == "SaveLatent") {
        used_.insert(id);  // what the next clip's workflow loads (LoadLatent): in memory here
      } else if (next.type == "ZeroCopyLatentStore") {
        used_.insert(id);
        const std::string tag = text(next, "buffer_tag");
        if (shot.continuity.mode != ContinuityMode::None && shot.continuity.tag != tag)
          out_.notes.push_back(nodeLabel(next) + ": stores under \"" + tag + "\" what reads from \"" +
                               shot.continuity.tag + "\"; ShotChain keeps one tag a shot, \"" + shot.continuity.tag +
                               "\"");
        else
          shot.continuity.tag = tag;
        for (const std::string& after : graph_.consumers(id)) decodeNode(graph_.nodes.at(after));
      } else {
        decodeNode(next);
      }
    }
  }

  void decodeNode(const ComfyNode& node) {
    if (node.type != "VAEDecode" && node.type != "VAEDecodeTiled") return;
    used_.insert(node.id);
    if (const ComfyNode* vae = upstream(node, "vae")) vaeLoader(*vae);
    framesTo(node);
  }

  // The frame rate of the video outputs the frames of `node` reach, through KJNodes' ImageBatchExtendWithOverlap
  // (an SVI chain joining its clips).
  void framesTo(const ComfyNode& node) {
    for (const std::string& id : graph_.consumers(node.id)) {
      const ComfyNode& out = graph_.nodes.at(id);
      if (out.type == "ImageBatchExtendWithOverlap" && !used_.count(id)) {
        used_.insert(id);
        const Json* mode = out.value("overlap_mode");
        const Json* overlap = out.value("overlap");
        if ((mode && *mode != "cut") || (overlap && *overlap != 4))
          out_.notes.push_back(nodeLabel(out) + ": overlap " + (overlap ? shortJson(*overlap) : "?") + " by " +
                               (mode ? shortJson(*mode) : "?") +
                               ": ShotChain cuts a continued SVI shot's first latent frame's worth of frames (4), as "
                               "SVI's own chaining does");
        framesTo(out);
      }
      for (const char* name : {"fps", "frame_rate"})
        if (out.value(name)) out_.sequence.settings.fps = number(out, name, kMinFps, kMaxFps);
    }
  }

  void shotOf(const ComfyNode& sampler) {
    used_.insert(sampler.id);
    Shot shot;
    const std::size_t index = out_.sequence.shots.size();
    samplerShot_[sampler.id] = index;
    shot.id = "shot-" + std::to_string(index + 1);
    shot.name =
        sampler.title.empty() || sampler.title == sampler.type ? "Shot " + std::to_string(index + 1) : sampler.title;
    const bool advanced = sampler.type == "KSamplerAdvanced";
    shot.seed = seedOf(sampler, advanced ? "noise_seed" : "seed");
    shot.steps = whole(sampler, "steps", 1, kMaxSteps);
    shot.guidance = number(sampler, "cfg", 0.0, kMaxGuidance);
    const std::string solver = text(sampler, "sampler_name");
    samplerNames_.push_back(solver);
    const std::string scheduler = text(sampler, "scheduler");
    if (scheduler != "simple" && scheduler != "normal" && scheduler != "sgm_uniform")
      out_.notes.push_back(nodeLabel(sampler) + ": scheduler \"" + scheduler + "\" becomes the shifted flow schedule");
    if (!advanced && sampler.value("denoise") && std::fabs(number(sampler, "denoise") - 1.0) > 1e-9)
      out_.notes.push_back(nodeLabel(sampler) + ": denoise " + sampler.value("denoise")->dump() +
                           " becomes a full denoise (1.0)");
    if (advanced && sampler.value("start_at_step") && number(sampler, "start_at_step") > 0)
      out_.notes.push_back(nodeLabel(sampler) + ": start_at_step " + sampler.value("start_at_step")->dump() +
                           " becomes 0");
    shot.prompt = promptOf(sampler, "positive", shot);
    shot.negativePrompt = promptOf(sampler, "negative", shot);
    const std::string dit = modelChain(sampler, shot);
    useDit(dit, sampler);
    latentOf(sampler, shot);
    downstream(sampler, shot);
    if (advanced && sampler.value("end_at_step")) {
      const int end = whole(sampler, "end_at_step", 0, 10000);
      if (end <= *shot.steps) firstStages_[sampler.id] = {index, end, *shot.steps, dit};
    }
    out_.sequence.shots.push_back(std::move(shot));
  }

  void useDit(const std::string& name, const ComfyNode& sampler) {
    if (!dit_.empty() && dit_ != name && name != ditHigh_)
      out_.notes.push_back(nodeLabel(sampler) + ": another diffusion model (" + name +
                           ") than the first shot's; every shot uses " + dit_);
    if (dit_.empty()) dit_ = name;
  }

  // The second KSamplerAdvanced of a Wan 2.2 14B pair: it finishes the first's latent with the low-noise expert
  // from the first's end_at_step. The pair is one shot; the split is kept as the step index (switch_step).
  void secondStage(const ComfyNode& sampler, const ComfyNode& first) {
    used_.insert(sampler.id);
    const auto stage = firstStages_.find(first.id);
    if (sampler.type != "KSamplerAdvanced" || stage == firstStages_.end())
      fail(nodeLabel(sampler) + ": its latent_image comes from " + nodeLabel(first) +
           ", which is not the first half of a two-sampler pair (a KSamplerAdvanced whose end_at_step is not past its "
           "last step)");
    const FirstStage& high = stage->second;
    Shot& shot = out_.sequence.shots[high.shot];
    samplerShot_[sampler.id] = high.shot;
    const int steps = whole(sampler, "steps", 1, kMaxSteps);
    if (steps != high.steps)
      fail(nodeLabel(sampler) + ": \"steps\" is " + std::to_string(steps) + " where " + nodeLabel(first) + " has " +
           std::to_string(high.steps) + ": the two samplers of a pair of experts split one schedule");
    if (sampler.value("start_at_step") && whole(sampler, "start_at_step", 0, 10000) != high.end)
      out_.notes.push_back(nodeLabel(sampler) + ": start_at_step " + sampler.value("start_at_step")->dump() +
                           " becomes " + std::to_string(high.end) + ", where " + nodeLabel(first) + " ends");
    shot.guidanceHighNoise = shot.guidance;
    shot.guidance = number(sampler, "cfg", 0.0, kMaxGuidance);
    shot.switchStep = high.end;
    // Each chain's LoRAs patch its own expert.
    std::vector<LoraRef> loras = shot.loras.value_or(std::vector<LoraRef>{});
    for (LoraRef& lora : loras) lora.expert = "high";
    Shot low;
    const std::string lowDit = modelChain(sampler, low);
    if (low.shift && shot.shift && *low.shift != *shot.shift)
      out_.notes.push_back(nodeLabel(sampler) + ": shift " + plain(*low.shift) +
                           " on the low-noise expert becomes the shot's " + plain(*shot.shift) +
                           " (one schedule for both)");
    for (LoraRef lora : low.loras.value_or(std::vector<LoraRef>{})) {
      lora.expert = "low";
      loras.push_back(lora);
    }
    if (loras.empty())
      shot.loras.reset();
    else
      shot.loras = loras;
    if (ditHigh_.empty()) {
      ditHigh_ = high.dit;
      if (dit_ == high.dit) dit_ = lowDit;
    }
    if (high.dit != ditHigh_ || lowDit != dit_)
      out_.notes.push_back(nodeLabel(sampler) + ": another pair of experts (" + high.dit + ", " + lowDit +
                           ") than the first shot's; "
                           "every shot uses " +
                           ditHigh_ + " and " + dit_);
    downstream(sampler, shot);
  }

  // The first shot's steps, guidance and shift become the sequence's; shots keep only what differs.
  void settleSamplerDefaults() {
    SamplerDefaults& d = out_.sequence.settings.sampler;
    Shot& first = out_.sequence.shots.front();
    d.steps = first.steps.value_or(d.steps);
    d.guidance = first.guidance.value_or(d.guidance);
    d.shift = first.shift.value_or(d.shift);
    if (first.guidanceHighNoise) d.guidanceHighNoise = first.guidanceHighNoise;
    for (Shot& shot : out_.sequence.shots) {
      if (shot.steps == d.steps) shot.steps.reset();
      if (shot.guidance == d.guidance) shot.guidance.reset();
      if (shot.shift == d.shift) shot.shift.reset();
      if (d.guidanceHighNoise && shot.guidanceHighNoise == d.guidanceHighNoise) shot.guidanceHighNoise.reset();
    }
    const std::string& name = samplerNames_.front();
    d.solver = name == "euler" ? Solver::Euler : Solver::UniPC;
    if (name != "euler" && name != "uni_pc" && name != "uni_pc_bh2")
      out_.notes.push_back("sampler_name \"" + name + "\" becomes UniPC (ShotChain has euler and unipc)");
    for (const std::string& other : samplerNames_)
      if (other != name) {
        out_.notes.push_back("the samplers use " + name + " and " + other + "; every shot uses " + toString(d.solver));
        break;
      }
  }

  // A LoRA by its loader's name: the file under a models folder's loras/ (absolute, as the sequence may
  // be written anywhere), else the name with a note.
  std::string loraFile(const std::string& name) {
    for (const std::filesystem::path& folder : options_.modelFolders)
      if (const std::string found = findIn(folder, name, {"loras", "."}); !found.empty())
        return std::filesystem::absolute(folder / found).lexically_normal().string();
    out_.notes.push_back("LoRA " + name + ": not found under " +
                         (options_.modelFolders.empty() ? std::string("a models folder (none was given)")
                                                        : options_.modelFolders.front().string() + "/loras") +
                         "; the sequence names it relative to itself");
    return name;
  }

  // A loader's file under a models folder: the path relative to the folder, or empty.
  std::string findIn(const std::filesystem::path& folder, const std::string& name,
                     std::initializer_list<const char*> subfolders) {
    std::error_code error;
    for (const char* sub : subfolders) {
      const std::filesystem::path relative = std::filesystem::path(sub) / name;
      if (std::filesystem::is_regular_file(folder / relative, error))
        return relative.lexically_normal().generic_string();
    }
    return "";
  }

  void resolveModels() {
    ModelSet& model = out_.sequence.settings.model;
    const std::string builtin = "builtin:";
    if (dit_.rfind(builtin, 0) == 0) {
      model.builtin = dit_.substr(builtin.size());
      return;
    }
    model.builtin.clear();
    if (options_.modelFolders.empty()) {
      model.dit = dit_;
      model.ditHighNoise = ditHigh_;
      model.vae = vae_;
      model.textEncoder = textEncoder_;
      model.imageEncoder = imageEncoder_;
      out_.notes.push_back("model files " + (ditHigh_.empty() ? "" : ditHigh_ + " (high noise), ") + dit_ + ", " +
                           (vae_.empty() ? "(no VAE)" : vae_) + ", " +
                           (textEncoder_.empty() ? "(no text encoder)" : textEncoder_) +
                           ": no models folder was given; set the models folder in the sequence before rendering");
      return;
    }
    struct Part {
      const std::string* file;
      std::string* field;
      const char *sub, *other;  // where ComfyUI keeps it, and its older name
    };
    const Part parts[] = {{&ditHigh_, &model.ditHighNoise, "diffusion_models", "unet"},
                          {&dit_, &model.dit, "diffusion_models", "unet"},
                          {&vae_, &model.vae, "vae", "vae"},
                          {&textEncoder_, &model.textEncoder, "text_encoders", "clip"},
                          {&imageEncoder_, &model.imageEncoder, "clip_vision", "clip_vision"}};
    // The folder that holds the most of the files (the first of equals).
    const std::filesystem::path* folder = &options_.modelFolders.front();
    int most = -1;
    for (const std::filesystem::path& candidate : options_.modelFolders) {
      int found = 0;
      for (const Part& part : parts)
        found += !part.file->empty() && !findIn(candidate, *part.file, {part.sub, part.other, "."}).empty();
      if (found > most) {
        most = found;
        folder = &candidate;
      }
    }
    model.folder = folder->string();
    // Each file as found there; a missing one where ComfyUI keeps it, so that putting it there (as the note says)
    // is all the document needs.
    for (const Part& part : parts) {
      if (part.file->empty()) {
        part.field->clear();
        continue;
      }
      *part.field = findIn(*folder, *part.file, {part.sub, part.other, "."});
      if (!part.field->empty()) continue;
      *part.field = (std::filesystem::path(part.sub) / *part.file).generic_string();
      out_.notes.push_back("model file " + *part.file + " is not in " + model.folder + ": put it in " +
                           (*folder / part.sub).string() + " before rendering");
    }
  }

  const ComfyGraph& graph_;
  std::string source_;
  const ComfyImportOptions& options_;
  ComfyImport out_;
  std::set<std::string> used_;
  std::set<std::string> handoffDone_;
  std::vector<std::string> samplerNames_;
  std::string dit_, ditHigh_, vae_, textEncoder_, imageEncoder_;
  // A KSamplerAdvanced that ends at or before its last step: the first half of a two-expert pair.
  struct FirstStage {
    std::size_t shot;
    int end, steps;
    std::string dit;
  };
  std::map<std::string, FirstStage> firstStages_;
  std::map<std::string, std::size_t> samplerShot_;  // by sampler id: the shot it samples
};

}  // namespace

std::vector<std::string> mappedComfyNodeTypes(const std::vector<models::ComfyWords>& families) {
  std::vector<std::string> types = {"KSampler",
                                    "KSamplerAdvanced",
                                    "CLIPTextEncode",
                                    "UNETLoader",
                                    "CLIPLoader",
                                    "VAELoader",
                                    "EmptyHunyuanLatentVideo",
                                    "EmptyMochiLatentVideo",
                                    "EmptyLatentImage",
                                    "EmptySD3LatentImage",
                                    "ModelSamplingSD3",
                                    "VAEDecode",
                                    "VAEDecodeTiled",
                                    "LoadImage",
                                    "Reroute",
                                    "ZeroCopyVRAMPin",
                                    "ZeroCopyLatentStore",
                                    "ZeroCopyLatentHandoff",
                                    "LoraLoaderModelOnly",
                                    "LoraLoader",
                                    "VAEEncode",
                                    "ImageScale",
                                    "ImageResizeKJv2",
                                    "ImageBatchExtendWithOverlap",
                                    "LoadLatent",
                                    "SaveLatent"};
  types.insert(types.end(), ggufUnetLoaderTypes().begin(), ggufUnetLoaderTypes().end());
  const FamilyNodeTypes family = familyNodeTypes(families);
  for (const auto* list : {&family.videoLatents, &family.motion})
    for (const std::string& type : *list)
      if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  return types;
}

ComfyImport importComfyWorkflow(const std::string& text, const std::string& source, const ComfyImportOptions& options) {
  const ComfyGraph graph = parseComfyGraph(text, source, familyNodeTypes(options.families));
  return Importer(graph, source, options).run();
}

}  // namespace shotchain::interop
