#include "models/lora/lora_patcher.h"

#include <chrono>

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
      signature[patch.target] += use.file->label + "@" + std::to_string(use.strength) + ";";
    }
  LoraPatchFigures figures;
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
        merged.add_(at::mm(patch->up.to(merged.device()), patch->down.to(merged.device())).reshape(merged.sizes()), factor);
    }
    originals_[name] = base;
    applied_[name] = signature[name];
    at::Tensor stored = merged.to(base.scalar_type());
    figures.bytesWritten += static_cast<std::uint64_t>(stored.nbytes());
    return stored;
  });
  figures.weightsPatched = static_cast<int>(originals_.size());
  for (const auto& [name, tensor] : originals_) figures.bytesKept += static_cast<std::uint64_t>(tensor.nbytes());
  figures.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return figures;
}

}  // namespace shotchain::models
