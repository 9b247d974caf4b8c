#pragma once

// LoRAs merged into a resident DiT between shots, never by reloading it: each touched weight becomes
// W' = W + Σ strength · scale · up·down (computed in float32, stored in W's dtype), and W itself is
// kept, so taking a LoRA off puts back the very tensor the model had (bit for bit, no copy). An fp8 weight
// kept as stored is never rewritten: its patches are set beside its layer (VideoDiffusionModel::setLayerAdapters)
// and taken off the same way.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/lora/lora_file.h"

namespace shotchain::models {

class VideoDiffusionModel;

struct LoraUse {
  std::shared_ptr<const LoraFile> file;
  double strength = 1.0;
};

struct LoraPatchFigures {
  int weightsPatched = 0;          // weights that differ from the base after the change
  std::uint64_t bytesWritten = 0;  // bytes of the patched weights made by this change
  std::uint64_t bytesKept = 0;     // bytes of the base weights kept to restore
  double seconds = 0;
};

class LoraPatcher {
 public:
  // Makes `model` carry exactly `stack` (in order; an empty stack restores the base). Weights patched
  // before and by the same LoRAs at the same strengths are left as they are.
  LoraPatchFigures apply(VideoDiffusionModel& model, const std::vector<LoraUse>& stack);
  // Every weight back to the base.
  void restore(VideoDiffusionModel& model) { apply(model, {}); }
  bool patched() const { return !originals_.empty() || adapted_; }

 private:
  std::map<std::string, at::Tensor> originals_;  // weight → the base tensor, while patched
  std::map<std::string, std::string> applied_;   // weight → what patches it now (files and strengths)
  bool adapted_ = false;                         // adapters set beside fp8 layers (kept as stored)
};

}  // namespace shotchain::models
