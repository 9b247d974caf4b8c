#include "models/lora/lora_patcher.h"

#include <chrono>
#include <stdexcept>

#include <ATen/ATen.h>

#include "models/video_diffusion_model.h"

namespace shotchain::models {

LoraPatchFigures LoraPatcher::apply(VideoDiffusionModel& model, const std::vector<LoraUse>& stack) {
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, std::vector<std::pair<const LoraPatch*, double>>> wanted;  // weight → patches, strengths
  std::map<std::string, std::string> signature;
  for (const LoraUse& use : stack)
    for (const LoraPatch& patch : use.file->patches) {
      wanted[patch.target].emplace_back(&patch, use.strength);
      signature[patch.target] += use.file->identity + "@" + std::to_string(use.strength) + ";";
    }
  // An fp8 weight or GGUF blocks kept as stored are never rewritten: their patches go beside the layer (LayerAdapter).
  std::map<std::string, std::vector<LayerAdapter>> adapters;
  LoraPatchFigures figures;
  for (const auto& [name, value] : model.namedParameters()) {
    const auto patches = wanted.find(name);
    if (patches == wanted.end() || (value.scalar_type() != at::kFloat8_e4m3fn &&
                                    value.scalar_type() != at::kFloat8_e5m2 && value.scalar_type() != at::kByte))
      continue;
    const at::ScalarType compute = at::kFloat;  // cast to the layer's dtype where it is used
    for (const auto& [patch, strength] : patches->second) {
      LayerAdapter adapter;
      adapter.factor = strength * patch->scale;
      if (patch->kind == LoraPatch::Kind::Diff)
        adapter.diff = patch->diff.to(value.device(), compute);
      else {
        adapter.up = patch->up.to(value.device(), compute);
        adapter.down = patch->down.to(value.device(), compute);
      }
      figures.bytesWritten += static_cast<std::uint64_t>(
          adapter.diff.defined() ? adapter.diff.nbytes() : adapter.up.nbytes() + adapter.down.nbytes());
      adapters[name].push_back(std::move(adapter));
    }
    wanted.erase(patches);
  }
  if (!adapters.empty() || adapted_) {
    figures.weightsPatched += static_cast<int>(adapters.size());
    adapted_ = !adapters.empty();
    model.setLayerAdapters(std::move(adapters));
  }
  model.replaceParameters([&](const std::string& name, const at::Tensor& value) {
    const auto original = originals_.find(name);
    const at::Tensor base = original != originals_.end() ? original->second : value;
    const auto patches = wanted.find(name);
    if (patches == wanted.end()) {
      if (original != originals_.end()) {
        originals_.erase(original);
        applied_.erase(name);
      }
      return base;
    }
    if (original != originals_.end() && applied_[name] == signature[name]) return value;  // unchanged

    at::Tensor merged = base.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
    for (const auto& [patch, strength] : patches->second) {
      const double factor = strength * patch->scale;
      if (patch->kind == LoraPatch::Kind::Diff)
        merged.add_(patch->diff.to(merged.device()), factor);
      else
        merged.add_(at::mm(patch->up.to(merged.device()), patch->down.to(merged.device())).reshape(merged.sizes()),
                    factor);
    }
    originals_[name] = base;
    applied_[name] = signature[name];
    at::Tensor stored = merged.to(base.scalar_type());
    figures.bytesWritten += static_cast<std::uint64_t>(stored.nbytes());
    return stored;
  });
  figures.weightsPatched += static_cast<int>(originals_.size());
  for (const auto& [name, tensor] : originals_) figures.bytesKept += static_cast<std::uint64_t>(tensor.nbytes());
  figures.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return figures;
}

}  // namespace shotchain::models
