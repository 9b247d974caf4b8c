#pragma once

// A LoRA file as ComfyUI reads one (comfy/lora.py, comfy/weight_adapter/lora.py; docs/lora.md): the
// patches it holds, resolved onto one DiT's weights. Data only: a safetensors file or a PyTorch zip
// checkpoint read without running it (io/weight_set.h).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/family_knowledge.h"

namespace shotchain::models {

class LoraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One change to one model weight, float32 on the CPU.
struct LoraPatch {
  enum class Kind { LowRank, Diff };
  Kind kind = Kind::LowRank;
  std::string target;   // the model's weight name ("blocks.0.self_attn.q.weight", "….bias" for diff_b)
  std::string source;   // the file's key it came from (for messages)
  at::Tensor up, down;  // LowRank: [out, r] and [r, in]
  at::Tensor diff;      // Diff: the whole delta, the weight's shape
  double scale = 1.0;   // alpha / rank, or 1 without an alpha
};

struct LoraFile {
  std::string label;  // the file name, for messages and reports
  // Its absolute path and its bytes' digest: two files of one name in two folders are two LoRAs, and so is
  // a file rewritten in place.
  std::string identity;
  std::vector<LoraPatch> patches;
  std::int64_t rank = 0;  // the largest rank of its low-rank patches (0: diffs only)
};

// The named weights (name → shape) a LoRA is resolved against: VideoDiffusionModel::namedParameters().
using WeightShapes = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

// Reads `path` and maps every key onto a weight of `weights`. Accepted key forms: the weight's own
// name without ".weight", prefixed `diffusion_model.`, `base_model.model.` (PEFT) or `transformer.`,
// kohya `lora_unet_<name with dots as underscores>`, and the family's other spelling of its layers (`aliases`,
// models/family_knowledge.h: diffusers' `attn1.to_q` for Wan's `self_attn.q`, …). Pair forms: `lora_up` /
// `lora_down`, `lora_B` / `lora_A` (with or without `.weight`, `.default`), `lora.up` / `lora.down`,
// `_lora.up` / `_lora.down`, `lora_linear_layer.up` / `.down`; `<target>.alpha`, or a top-level
// `lora_alpha` of a training checkpoint, scales by alpha / rank. `diff` and `diff_b` are whole deltas.
// Throws LoraError naming the file and the key: a key that matches no weight (`family` names the
// model), a shape that does not fit, a form it cannot apply (LoCon's lora_mid, DoRA, set_weight), a
// non-finite value.
// The elements of the weights a LoRA file patches, from its header alone (for the memory plan: the
// patched copies sit beside the kept base weights). Throws LoraError naming the file.
std::uint64_t loraPatchedElements(const std::filesystem::path& path);

LoraFile readLoraFile(const std::filesystem::path& path, const WeightShapes& weights, const std::string& family,
                      std::span<const LoraLayerAlias> aliases);

}  // namespace shotchain::models
