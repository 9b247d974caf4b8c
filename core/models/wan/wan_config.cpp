#include "models/wan/wan_config.h"

#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/strict_json.h"
#include "io/weight_set.h"

namespace shotchain::models {
namespace {

using Json = nlohmann::json;

std::int64_t positive(const Json& json, const char* key, std::int64_t fallback) {
  if (!json.contains(key)) return fallback;
  const Json& value = json[key];
  if (!value.is_number_integer() || value.get<std::int64_t>() <= 0)
    throw std::invalid_argument(std::string("config: \"") + key + "\" must be a positive integer");
  return value.get<std::int64_t>();
}

}  // namespace

std::uint64_t WanConfig::parameterCount() const {
  const auto d = static_cast<std::uint64_t>(dim), f = static_cast<std::uint64_t>(ffnDim);
  const std::uint64_t linear = d * d + d;
  std::uint64_t block = 6 * d + 8 * linear + 2 * (d * f) + f + d + 2 * d;  // modulation, q/k/v/o ×2, ffn, norm3
  if (qkNorm) block += 4 * d;
  std::uint64_t total = static_cast<std::uint64_t>(numLayers) * block;
  total += d * static_cast<std::uint64_t>(inDim * patchVolume()) + d;  // patch embedding
  total += d * static_cast<std::uint64_t>(textDim) + d + linear;       // text embedding
  total += d * static_cast<std::uint64_t>(freqDim) + d + linear;       // time embedding
  total += 6 * d * d + 6 * d;                                          // time projection
  const auto headOut = static_cast<std::uint64_t>(outDim * patchVolume());
  total += 2 * d + headOut * d + headOut;                             // head
  if (injectSampleInfo) total += 2 * d + linear + 6 * d * d + 6 * d;  // fps embedding and projection
  if (imageDim > 0) {
    const auto i = static_cast<std::uint64_t>(imageDim);
    total += 2 * i + i * i + i + d * i + d + 2 * d;                // img_emb: LN, Linear, Linear, LN
    total += static_cast<std::uint64_t>(imagePositionTokens) * i;  // FLF2V emb_pos
    total += static_cast<std::uint64_t>(numLayers) * (2 * linear + (qkNorm ? d : 0));  // k_img, v_img, norm_k_img
  }
  return total;
}

std::string WanConfig::variant() const {
  if (modelType == "ti2v" && inDim == 48 && outDim == 48 && textDim == 4096 && freqDim == 256 && dim == 3072 &&
      ffnDim == 14336 && numHeads == 24 && numLayers == 30 && patch == std::array<std::int64_t, 3>{1, 2, 2})
    return "5B";
  if ((modelType == "i2v" || modelType == "flf2v") && inDim == 36 && outDim == 16 && textDim == 4096 &&
      freqDim == 256 && dim == 5120 && ffnDim == 13824 && numHeads == 40 && numLayers == 40 &&
      patch == std::array<std::int64_t, 3>{1, 2, 2})
    return imageDim > 0 ? "14B" : "A14B";
  const bool standard = modelType == "t2v" && inDim == 16 && outDim == 16 && textDim == 4096 && freqDim == 256 &&
                        patch == std::array<std::int64_t, 3>{1, 2, 2};
  if (standard && dim == 1536 && ffnDim == 8960 && numHeads == 12 && numLayers == 30) return "1.3B";
  if (standard && dim == 5120 && ffnDim == 13824 && numHeads == 40 && numLayers == 40) return "14B";
  const WanConfig tiny = preset("tiny");
  if (dim == tiny.dim && ffnDim == tiny.ffnDim && numHeads == tiny.numHeads && numLayers == tiny.numLayers &&
      textDim == tiny.textDim && freqDim == tiny.freqDim)
    return "tiny";
  return "custom";
}

std::string WanConfig::family() const {
  std::string name = modelType == "ti2v"    ? "Wan 2.2 TI2V"
                     : modelType == "flf2v" ? "Wan 2.1 FLF2V"
                     : modelType == "i2v"   ? (imageDim > 0 ? "Wan 2.1 I2V" : "Wan 2.2 I2V")
                     : injectSampleInfo     ? "SkyReels-V2 DF"
                     : diffusionForcing     ? "Wan 2.1 T2V (diffusion forcing)"
                                            : "Wan 2.1 T2V";
  if (causalBlockSize > 0) name += ", causal, chunk " + std::to_string(causalBlockSize);
  return name;
}

void WanConfig::check() const {
  if (modelType != "t2v" && modelType != "ti2v" && modelType != "i2v" && modelType != "flf2v")
    throw std::invalid_argument("model_type \"" + modelType + "\" is not supported yet (t2v, ti2v, i2v and flf2v)");
  if (modelType == "flf2v" && (imageDim <= 0 || imagePositionTokens <= 0))
    throw std::invalid_argument(
        "an flf2v model needs an image embedding with its position embedding (img_emb.emb_pos)");
  if (imageDim < 0 || imagePositionTokens < 0 || (imageDim > 0 && modelType != "i2v" && modelType != "flf2v"))
    throw std::invalid_argument("an image embedding (image_dim) belongs to an i2v or flf2v model");
  if ((modelType == "i2v" || modelType == "flf2v") && inDim <= outDim)
    throw std::invalid_argument("an " + modelType +
                                " model takes the image condition as extra input channels: in_dim " +
                                std::to_string(inDim) + " must exceed out_dim " + std::to_string(outDim));
  if (modelType == "ti2v" && inDim != outDim)
    throw std::invalid_argument("a ti2v model denoises its own input: in_dim " + std::to_string(inDim) +
                                " must equal out_dim " + std::to_string(outDim));
  if (dim <= 0 || numHeads <= 0 || dim % numHeads != 0)
    throw std::invalid_argument("dim " + std::to_string(dim) + " is not a multiple of num_heads " +
                                std::to_string(numHeads));
  if (headDim() % 2 != 0 || headDim() < 6)
    throw std::invalid_argument("head_dim " + std::to_string(headDim()) + " must be even and at least 6 for 3D RoPE");
  if (freqDim % 2 != 0) throw std::invalid_argument("freq_dim must be even");
  for (const std::int64_t p : patch)
    if (p <= 0) throw std::invalid_argument("patch_size entries must be positive");
  if (ffnDim <= 0 || numLayers < 0 || inDim <= 0 || outDim <= 0 || textDim <= 0 || textLen <= 0)
    throw std::invalid_argument("config sizes must be positive");
  if (causalBlockSize < 0) throw std::invalid_argument("causal_block_size must be 0 (full attention) or positive");
}

std::string WanConfig::toJson() const {
  Json json = {{"model_type", modelType},
               {"patch_size", patch},
               {"text_len", textLen},
               {"in_dim", inDim},
               {"dim", dim},
               {"ffn_dim", ffnDim},
               {"freq_dim", freqDim},
               {"text_dim", textDim},
               {"out_dim", outDim},
               {"num_heads", numHeads},
               {"num_layers", numLayers},
               {"window_size", {-1, -1}},
               {"qk_norm", qkNorm},
               {"cross_attn_norm", crossAttnNorm},
               {"eps", eps}};
  // Written only when set, so the configs of Wan 2.1 T2V files stay what they were.
  if (injectSampleInfo) json["inject_sample_info"] = true;
  if (causalBlockSize > 0) json["causal_block_size"] = causalBlockSize;
  if (diffusionForcing) json["diffusion_forcing"] = true;
  if (freshClipContinuation) json["fresh_clip_continuation"] = true;
  if (imageDim > 0) json["image_dim"] = imageDim;
  if (imagePositionTokens > 0) json["image_position_tokens"] = imagePositionTokens;
  return json.dump();
}

WanConfig WanConfig::fromJson(std::string_view text) {
  Json json;
  try {
    json = io::parseJsonChecked<Json>(text, io::kMaxJsonDepth);
  } catch (const io::JsonRefused& error) {
    throw std::invalid_argument(std::string("config: not valid JSON: ") + error.what());
  }
  if (!json.is_object()) throw std::invalid_argument("config: expected a JSON object");
  WanConfig config;
  if (json.contains("model_type")) {
    if (!json["model_type"].is_string()) throw std::invalid_argument("config: \"model_type\" must be a string");
    config.modelType = json["model_type"].get<std::string>();
  }
  if (json.contains("patch_size")) {
    const Json& patch = json["patch_size"];
    if (!patch.is_array() || patch.size() != 3)
      throw std::invalid_argument("config: \"patch_size\" must have 3 entries");
    for (std::size_t i = 0; i < 3; ++i) {
      if (!patch[i].is_number_integer()) throw std::invalid_argument("config: \"patch_size\" entries must be integers");
      config.patch[i] = patch[i].get<std::int64_t>();
    }
  }
  if (json.contains("window_size")) {
    const Json& window = json["window_size"];
    if (!window.is_array() || window.size() != 2 || window[0] != -1 || window[1] != -1)
      throw std::invalid_argument("config: only window_size [-1, -1] (global attention) is supported");
  }
  config.textLen = positive(json, "text_len", config.textLen);
  config.inDim = positive(json, "in_dim", config.inDim);
  config.dim = positive(json, "dim", config.dim);
  config.ffnDim = positive(json, "ffn_dim", config.ffnDim);
  config.freqDim = positive(json, "freq_dim", config.freqDim);
  config.textDim = positive(json, "text_dim", config.textDim);
  config.outDim = positive(json, "out_dim", config.outDim);
  config.numHeads = positive(json, "num_heads", config.numHeads);
  config.numLayers = positive(json, "num_layers", config.numLayers);
  config.imageDim = json.contains("image_dim") ? positive(json, "image_dim", 0) : 0;
  config.imagePositionTokens = json.contains("image_position_tokens") ? positive(json, "image_position_tokens", 0) : 0;
  if (json.contains("eps")) {
    if (!json["eps"].is_number()) throw std::invalid_argument("config: \"eps\" must be a number");
    config.eps = json["eps"].get<double>();
  }
  auto flag = [&](const char* key, bool fallback) {
    if (!json.contains(key)) return fallback;
    if (!json[key].is_boolean())
      throw std::invalid_argument(std::string("config: \"") + key + "\" must be true or false");
    return json[key].get<bool>();
  };
  config.qkNorm = flag("qk_norm", config.qkNorm);
  config.crossAttnNorm = flag("cross_attn_norm", config.crossAttnNorm);
  config.injectSampleInfo = flag("inject_sample_info", config.injectSampleInfo);
  config.diffusionForcing = flag("diffusion_forcing", config.diffusionForcing);
  config.freshClipContinuation = flag("fresh_clip_continuation", config.freshClipContinuation);
  if (json.contains("causal_block_size") && !json["causal_block_size"].is_null()) {
    const Json& block = json["causal_block_size"];
    if (!block.is_number_integer() || block.get<std::int64_t>() < 0)
      throw std::invalid_argument("config: \"causal_block_size\" must be a non-negative integer");
    config.causalBlockSize = block.get<std::int64_t>();
  }
  return config;
}

WanConfig WanConfig::preset(std::string_view name) {
  WanConfig config;
  if (name == "1.3b" || name == "1.3B") return config;
  if (name == "14b" || name == "14B") {
    config.dim = 5120;
    config.ffnDim = 13824;
    config.numHeads = 40;
    config.numLayers = 40;
    return config;
  }
  if (name == "ti2v-5b" || name == "ti2v-5B") {
    config.modelType = "ti2v";
    config.inDim = config.outDim = 48;
    config.dim = 3072;
    config.ffnDim = 14336;
    config.numHeads = 24;
    config.numLayers = 30;
    return config;
  }
  if (name == "i2v-a14b" || name == "i2v-A14B") {  // 14B's blocks with the image condition's 20 input channels
    config = preset("14b");
    config.modelType = "i2v";
    config.inDim = 36;
    return config;
  }
  if (name == "i2v-14b" || name == "i2v-14B" || name == "flf2v-14b" || name == "flf2v-14B") {
    config = preset("i2v-a14b");  // Wan 2.1 I2V-14B: the same blocks, plus the CLIP image embedding
    config.imageDim = 1280;
    if (name.starts_with("flf2v")) {
      config.modelType = "flf2v";
      config.imagePositionTokens = 2 * 257;
    }
    return config;
  }
  if (name == "tiny" || name == "tiny-ti2v" || name == "tiny-i2v") {  // the golden reference configurations
    if (name == "tiny-ti2v") {
      config.modelType = "ti2v";
      config.inDim = config.outDim = 48;
    }
    if (name == "tiny-i2v") {
      config.modelType = "i2v";
      config.inDim = 36;
    }
    config.textLen = 16;
    config.dim = 64;
    config.ffnDim = 128;
    config.freqDim = 32;
    config.textDim = 48;
    config.numHeads = 2;
    config.numLayers = 2;
    return config;
  }
  throw std::invalid_argument("unknown config \"" + std::string(name) +
                              "\" (tiny, tiny-ti2v, tiny-i2v, 1.3b, 14b, i2v-a14b, ti2v-5b, i2v-14b, flf2v-14b)");
}

WanDetection detectWanConfig(const io::WeightSet& weights) {
  WanDetection result;
  auto shapeOf = [&](const std::string& name) -> const std::vector<std::uint64_t>* {
    const io::WeightInfo* info = weights.find(name);
    return info ? &info->shape : nullptr;
  };
  result.isWanDit = shapeOf("head.modulation") != nullptr || shapeOf("blocks.0.cross_attn.norm_k.weight") != nullptr;
  if (!result.isWanDit) {
    result.problems.push_back("not a Wan DiT: no head.modulation / blocks.0.cross_attn.norm_k.weight tensor");
    return result;
  }
  if (shapeOf("vace_patch_embedding.weight")) result.problems.push_back("VACE models are not supported yet");
  result.imageEmbedding =
      shapeOf("img_emb.proj.0.weight") != nullptr || shapeOf("blocks.0.cross_attn.k_img.weight") != nullptr;

  const auto meta = weights.metadata().find("config");
  if (meta != weights.metadata().end()) {
    try {
      result.config = WanConfig::fromJson(meta->second);
      result.configSource = "metadata";
    } catch (const std::invalid_argument& error) {
      result.problems.push_back(std::string("metadata ") + error.what());
    }
  }
  if (result.configSource.empty()) {
    result.configSource = "tensor shapes";
    WanConfig& c = result.config;
    const auto* patch = shapeOf("patch_embedding.weight");
    if (patch && patch->size() == 5) {
      c.dim = static_cast<std::int64_t>((*patch)[0]);
      c.inDim = static_cast<std::int64_t>((*patch)[1]);
      for (std::size_t i = 0; i < 3; ++i) c.patch[i] = static_cast<std::int64_t>((*patch)[2 + i]);
    } else {
      result.problems.push_back("patch_embedding.weight is missing or not 5-D");
    }
    if (const auto* ffn = shapeOf("blocks.0.ffn.0.weight"); ffn && ffn->size() == 2)
      c.ffnDim = static_cast<std::int64_t>((*ffn)[0]);
    if (const auto* time = shapeOf("time_embedding.0.weight"); time && time->size() == 2)
      c.freqDim = static_cast<std::int64_t>((*time)[1]);
    if (const auto* text = shapeOf("text_embedding.0.weight"); text && text->size() == 2)
      c.textDim = static_cast<std::int64_t>((*text)[1]);
    if (const auto* head = shapeOf("head.head.weight"); head && head->size() == 2 && c.patchVolume() > 0)
      c.outDim = static_cast<std::int64_t>((*head)[0]) / c.patchVolume();
    std::set<std::int64_t> layers;
    for (const io::WeightInfo& info : weights.weights()) {
      if (!info.name.starts_with("blocks.")) continue;
      const std::size_t dot = info.name.find('.', 7);
      try {
        layers.insert(std::stoll(info.name.substr(7, dot - 7)));
      } catch (const std::exception&) {
      }
    }
    c.numLayers = static_cast<std::int64_t>(layers.size());
    if (c.dim % 128 == 0) {
      c.numHeads = c.dim / 128;  // every published Wan 2.1 DiT has head_dim 128
    } else {
      result.problems.push_back(
          "dim " + std::to_string(c.dim) +
          " is not a multiple of 128: the head count cannot be inferred (store a config in the metadata)");
    }
    c.qkNorm = shapeOf("blocks.0.self_attn.norm_q.weight") != nullptr;
    c.crossAttnNorm = shapeOf("blocks.0.norm3.weight") != nullptr;
  }
  // Block-causal checkpoints (Self-Forcing, LongLive) have the plain Wan key names: their chunk comes from
  // the metadata, as "causal_block_size" or Self-Forcing's "num_frame_per_block".
  for (const char* key : {"causal_block_size", "num_frame_per_block"}) {
    const auto found = weights.metadata().find(key);
    if (found == weights.metadata().end()) continue;
    try {
      const long long block = std::stoll(found->second);
      // A chunk past the longest clip (1025 frames: 257 latent frames) is no model's.
      if (block < 0 || block > 257 || std::to_string(block) != found->second)
        throw std::invalid_argument(found->second);
      result.config.causalBlockSize = block;
    } catch (const std::exception&) {
      result.problems.push_back(std::string("metadata \"") + key + "\": \"" + found->second +
                                "\" is not a whole number of latent frames from 0 to 257");
    }
  }
  // The fps embedding is what the key names say of a SkyReels-V2 DF checkpoint, whatever a config claims.
  if (shapeOf("fps_embedding.weight")) result.config.injectSampleInfo = true;
  // Wan 2.1 I2V / FLF2V: the image embedding's width and FLF2V's position rows from their tensors.
  WanConfig& c = result.config;
  c.imageDim = 0;
  c.imagePositionTokens = 0;
  if (result.imageEmbedding) {
    const auto* norm = shapeOf("img_emb.proj.0.weight");
    if (norm && norm->size() == 1) {
      c.imageDim = static_cast<std::int64_t>((*norm)[0]);
    } else {
      result.problems.push_back("blocks.0.cross_attn.k_img.weight without img_emb.proj.0.weight: no image embedding");
    }
    if (c.modelType == "t2v") c.modelType = "i2v";
    if (const auto* position = shapeOf("img_emb.emb_pos")) {
      c.modelType = "flf2v";
      if (position->size() == 3) c.imagePositionTokens = static_cast<std::int64_t>((*position)[1]);
    }
  }
  // Wan 2.2 TI2V has Wan 2.1's key names; its 48 latent channels (the Wan 2.2 VAE's) tell it apart.
  if (result.configSource == "tensor shapes" && result.config.modelType == "t2v" && result.config.inDim == 48 &&
      result.config.outDim == 48)
    result.config.modelType = "ti2v";
  // Wan 2.2 I2V-A14B experts: Wan 2.1 key names and no image embedding, but the image enters as extra input
  // channels (y: the frame mask and the image latent).
  if (result.configSource == "tensor shapes" && result.config.modelType == "t2v" && !result.imageEmbedding &&
      result.config.inDim > result.config.outDim)
    result.config.modelType = "i2v";
  if (result.config.modelType == "t2v" && result.config.inDim != result.config.outDim)
    result.problems.push_back("in_dim " + std::to_string(result.config.inDim) + " with out_dim " +
                              std::to_string(result.config.outDim) + ": a text-to-video DiT denoises its own input");
  {
    try {
      result.config.check();
    } catch (const std::invalid_argument& error) {
      result.problems.push_back(error.what());
    }
  }
  return result;
}

}  // namespace shotchain::models
