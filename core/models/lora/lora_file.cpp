#include "models/lora/lora_file.h"
#include "models/lora/lora_summary.h"

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <ATen/ATen.h>

#include "io/content_digest.h"
#include "io/pt_checkpoint.h"
#include "io/safetensors_header.h"
#include "io/weight_set.h"

namespace shotchain::models {
namespace {

enum class Role { Up, Down, Alpha, Diff, DiffBias, Unsupported };

struct Suffix {
  std::string_view text;
  Role role;
};

// Longest first: a key takes the first suffix it ends with.
constexpr std::array<Suffix, 20> kSuffixes{{
    {".lora_linear_layer.down.weight", Role::Down},
    {".lora_linear_layer.up.weight", Role::Up},
    {".lora_A.default.weight", Role::Down},
    {".lora_B.default.weight", Role::Up},
    {".lora_down.weight", Role::Down},
    {".lora_mid.weight", Role::Unsupported},
    {".lora.down.weight", Role::Down},
    {"_lora.down.weight", Role::Down},
    {".lora_up.weight", Role::Up},
    {".lora.up.weight", Role::Up},
    {"_lora.up.weight", Role::Up},
    {".lora_A.weight", Role::Down},
    {".lora_B.weight", Role::Up},
    {".reshape_weight", Role::Unsupported},
    {".dora_scale", Role::Unsupported},
    {".set_weight", Role::Unsupported},
    {".lora_A", Role::Down},
    {".lora_B", Role::Up},
    {".diff_b", Role::DiffBias},
    {".alpha", Role::Alpha},
}};

struct Parsed {
  std::string base;  // the key less its suffix
  Role role;
};

std::optional<Parsed> parseKey(const std::string& key) {
  for (const Suffix& s : kSuffixes)
    if (key.size() > s.text.size() && key.ends_with(s.text))
      return Parsed{key.substr(0, key.size() - s.text.size()), s.role};
  for (const char* other : {".diff", ".w_norm", ".b_norm"})
    if (key.ends_with(other))
      return Parsed{key.substr(0, key.size() - std::string_view(other).size()),
                    std::string_view(other) == ".diff" ? Role::Diff : Role::Unsupported};
  return std::nullopt;
}

// The other spelling of the layer `base` ("blocks.3.self_attn.q" → "blocks.3.attn1.to_q" for Wan's diffusers
// names), or "" when the family names no other for it.
std::string aliasOf(const std::string& base, std::span<const LoraLayerAlias> aliases) {
  for (const LoraLayerAlias& alias : aliases)
    if (base.ends_with(alias.own))
      return base.substr(0, base.size() - std::string_view(alias.own).size()) + alias.alias;
  return {};
}

std::string underscored(std::string text) {
  for (char& c : text)
    if (c == '.') c = '_';
  return text;
}

// Every name a LoRA may use for the layer `base` ("blocks.0.self_attn.q"): ComfyUI's prefixes, kohya's form, and
// the family's other spelling of the layer with them.
std::vector<std::string> aliasesOf(const std::string& base, std::span<const LoraLayerAlias> aliases) {
  std::vector<std::string> names{base, "diffusion_model." + base, "base_model.model." + base, "transformer." + base,
                                 "lora_unet_" + underscored(base)};
  if (const std::string d = aliasOf(base, aliases); !d.empty()) {
    names.push_back(d);
    names.push_back("transformer." + d);
    names.push_back("diffusion_model." + d);
    names.push_back("lora_unet_" + underscored(d));
  }
  return names;
}

// An alpha a patch is scaled by (alpha / rank): a finite number of a size LoRAs are trained with; past it the
// patched weights overflow.
constexpr double kMaxAlpha = 1e6;

// A training checkpoint's top-level "lora_alpha" (Self-Forcing style: {"generator_lora": …, "lora_alpha": 8});
// a value that is not a number is refused, not ignored.
std::optional<double> checkpointAlpha(const io::WeightSet& set, const std::filesystem::path& path) {
  if (!set.checkpoint()) return std::nullopt;
  for (const auto& [key, value] : set.checkpoint()->archive().values) {
    if (key != "lora_alpha") continue;
    const std::size_t space = value.find(' ');
    const std::string number = value.substr(space == std::string::npos ? 0 : space + 1);
    double alpha = 0;
    std::size_t used = 0;
    try {
      alpha = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != number.size() || !std::isfinite(alpha) || std::fabs(alpha) > kMaxAlpha)
      throw LoraError(path.string() + ": \"lora_alpha\": \"" + value.substr(0, 40) +
                      "\" is not a number from -1e6 to 1e6");
    return alpha;
  }
  return std::nullopt;
}

std::string shapeText(at::IntArrayRef shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

struct Group {
  std::string up, down, alpha, diff, diffBias;  // file keys
};

}  // namespace

std::uint64_t loraPatchedElements(const std::filesystem::path& path) {
  std::optional<io::WeightSet> set;
  try {
    set = io::WeightSet::open(path);
  } catch (const io::SafetensorsError& error) {
    throw LoraError(error.what());
  }
  std::map<std::string, std::uint64_t> outRows, inColumns, diffs;
  for (const io::WeightInfo& info : set->weights()) {
    const std::optional<Parsed> parsed = parseKey(info.name);
    if (!parsed || info.shape.empty()) continue;
    std::uint64_t rest = 1;
    for (std::size_t d = 1; d < info.shape.size(); ++d) rest *= info.shape[d];
    if (parsed->role == Role::Up)
      outRows[parsed->base] = info.shape[0];
    else if (parsed->role == Role::Down)
      inColumns[parsed->base] = rest;
    else if (parsed->role == Role::Diff || parsed->role == Role::DiffBias)
      diffs[info.name] = info.shape[0] * rest;
  }
  std::uint64_t elements = 0;
  for (const auto& [base, rows] : outRows)
    if (const auto in = inColumns.find(base); in != inColumns.end()) elements += rows * in->second;
  for (const auto& [key, count] : diffs) elements += count;
  return elements;
}

std::optional<LoraSummary> summariseLora(const io::WeightSet& weights,
                                         std::span<const FamilyKnowledge* const> families) {
  std::map<std::string, std::uint64_t> outRows, inColumns;
  std::map<std::int64_t, int> ranks;
  std::set<std::string> layers;
  std::uint64_t diffElements = 0;
  const FamilyKnowledge* target = nullptr;  // the family whose layer names it uses
  for (const io::WeightInfo& info : weights.weights()) {
    const std::optional<Parsed> parsed = parseKey(info.name);
    if (!parsed || info.shape.empty() || parsed->role == Role::Alpha || parsed->role == Role::Unsupported) continue;
    layers.insert(parsed->base);
    const std::string& b = parsed->base;
    for (const FamilyKnowledge* family : families)
      for (const LoraLayerAlias& alias : family->loraLayerAliases)
        if (!target && (b.ends_with(alias.own) || b.ends_with(alias.alias))) target = family;
    std::uint64_t rest = 1;
    for (std::size_t d = 1; d < info.shape.size(); ++d) rest *= info.shape[d];
    if (parsed->role == Role::Up) outRows[b] = info.shape[0];
    if (parsed->role == Role::Down) {
      inColumns[b] = rest;
      ++ranks[static_cast<std::int64_t>(info.shape[0])];
    }
    if (parsed->role == Role::Diff || parsed->role == Role::DiffBias) diffElements += info.shape[0] * rest;
  }
  if (layers.empty()) return std::nullopt;
  LoraSummary out;
  out.layers = static_cast<int>(layers.size());
  for (const auto& [rank, count] : ranks)
    if (out.rank == 0 || count > ranks[out.rank]) out.rank = rank;
  out.target = target ? target->loraTarget : "";
  out.family = target;
  for (const auto& [base, rows] : outRows)
    if (const auto in = inColumns.find(base); in != inColumns.end()) out.patchedElements += rows * in->second;
  out.patchedElements += diffElements;
  return out;
}

LoraFile readLoraFile(const std::filesystem::path& path, const WeightShapes& weights, const std::string& family,
                      std::span<const LoraLayerAlias> aliases) {
  LoraFile out;
  out.label = path.filename().string();
  out.identity = std::filesystem::absolute(path).lexically_normal().string() + "@" + io::contentDigest(path);
  const auto fail = [&](const std::string& key, const std::string& why) -> LoraError {
    return LoraError(path.string() + ": " + (key.empty() ? "" : "\"" + key + "\": ") + why);
  };
  std::optional<io::WeightSet> set;
  try {
    set = io::WeightSet::open(path);
  } catch (const io::SafetensorsError& error) {
    throw LoraError(error.what());
  }

  std::map<std::string, std::vector<std::int64_t>> shapes(weights.begin(), weights.end());
  std::map<std::string, std::string> layerOf;  // alias → layer ("blocks.0.self_attn.q")
  for (const auto& [name, shape] : weights)
    if (name.ends_with(".weight"))
      for (const std::string& alias : aliasesOf(name.substr(0, name.size() - 7), aliases))
        layerOf.emplace(alias, name.substr(0, name.size() - 7));

  std::map<std::string, Group> groups;           // by layer
  std::map<std::string, std::string> aliasUsed;  // layer → the alias the file used
  for (const io::WeightInfo& info : set->weights()) {
    const std::optional<Parsed> parsed = parseKey(info.name);
    if (!parsed) throw fail(info.name, "is not a LoRA key (lora_up/lora_down, lora_A/lora_B, alpha, diff, diff_b)");
    if (parsed->role == Role::Unsupported)
      throw fail(info.name,
                 "is a kind of patch ShotChain does not apply (LoCon mid, DoRA, reshape, set or norm weights)");
    const auto layer = layerOf.find(parsed->base);
    if (layer == layerOf.end())
      throw fail(info.name, "matches no weight of the " + family + " DiT (is the LoRA for another model?)");
    const auto [used, fresh] = aliasUsed.emplace(layer->second, parsed->base);
    if (!fresh && used->second != parsed->base)
      throw fail(info.name, "patches " + layer->second + " again (also as \"" + used->second + "\")");
    Group& g = groups[layer->second];
    std::string& slot = parsed->role == Role::Up      ? g.up
                        : parsed->role == Role::Down  ? g.down
                        : parsed->role == Role::Alpha ? g.alpha
                        : parsed->role == Role::Diff  ? g.diff
                                                      : g.diffBias;
    if (!slot.empty()) throw fail(info.name, "is given twice (also as \"" + slot + "\")");
    slot = info.name;
  }
  if (groups.empty()) throw fail("", "holds no LoRA tensors");

  const std::optional<double> fileAlpha = checkpointAlpha(*set, path);
  const auto load = [&](const std::string& key) {
    at::Tensor t = set->load(key, at::kFloat).contiguous();
    if (!at::isfinite(t).all().item<bool>()) throw fail(key, "holds a value that is not finite");
    return t;
  };
  for (const auto& [layer, g] : groups) {
    const std::string weight = layer + ".weight";
    const std::vector<std::int64_t>& shape = shapes.at(weight);
    if (!g.up.empty() || !g.down.empty()) {
      if (g.up.empty() || g.down.empty())
        throw fail(g.up.empty() ? g.down : g.up,
                   "has no " + std::string(g.up.empty() ? "up (B)" : "down (A)") + " half");
      LoraPatch patch;
      patch.target = weight;
      patch.source = g.up;
      patch.up = load(g.up);
      patch.down = load(g.down);
      if (patch.up.dim() < 2 || patch.down.dim() < 2) throw fail(g.up, "the up and down halves must be matrices");
      const at::Tensor up = patch.up.flatten(1), down = patch.down.flatten(1);
      std::int64_t elements = 1;
      for (const std::int64_t d : shape) elements *= d;
      if (up.size(1) != down.size(0) || up.size(0) != shape.front() || up.size(0) * down.size(1) != elements)
        throw fail(g.up, "up " + shapeText(patch.up.sizes()) + " × down " + shapeText(patch.down.sizes()) +
                             " does not make " + weight + " " + shapeText(shape));
      patch.up = up;
      patch.down = down;
      const auto rank = down.size(0);
      out.rank = std::max(out.rank, rank);
      std::optional<double> alpha = fileAlpha;
      if (!g.alpha.empty()) {
        const at::Tensor a = load(g.alpha);
        if (a.numel() != 1) throw fail(g.alpha, "must hold one number, not " + shapeText(a.sizes()));
        alpha = a.item<double>();
        if (std::fabs(*alpha) > kMaxAlpha) throw fail(g.alpha, "is outside -1e6..1e6");
      }
      patch.scale = alpha ? *alpha / static_cast<double>(rank) : 1.0;
      out.patches.push_back(std::move(patch));
    } else if (!g.alpha.empty() && g.diff.empty() && g.diffBias.empty()) {
      throw fail(g.alpha, "is an alpha without its up and down halves");
    }
    if (!g.diff.empty()) {
      if (!g.up.empty()) throw fail(g.diff, "a weight gets a low-rank patch or a diff, not both");
      LoraPatch patch;
      patch.kind = LoraPatch::Kind::Diff;
      patch.target = weight;
      patch.source = g.diff;
      patch.diff = load(g.diff);
      if (patch.diff.sizes() != at::IntArrayRef(shape))
        throw fail(g.diff, shapeText(patch.diff.sizes()) + " is not the shape of " + weight + " " + shapeText(shape));
      out.patches.push_back(std::move(patch));
    }
    if (!g.diffBias.empty()) {
      const std::string bias = layer + ".bias";
      const auto found = shapes.find(bias);
      if (found == shapes.end()) throw fail(g.diffBias, layer + " has no bias to patch");
      LoraPatch patch;
      patch.kind = LoraPatch::Kind::Diff;
      patch.target = bias;
      patch.source = g.diffBias;
      patch.diff = load(g.diffBias);
      if (patch.diff.sizes() != at::IntArrayRef(found->second))
        throw fail(g.diffBias,
                   shapeText(patch.diff.sizes()) + " is not the shape of " + bias + " " + shapeText(found->second));
      out.patches.push_back(std::move(patch));
    }
  }
  return out;
}

}  // namespace shotchain::models
