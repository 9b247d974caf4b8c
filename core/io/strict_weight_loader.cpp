#include "io/strict_weight_loader.h"

#include <set>
#include <stdexcept>

#include <ATen/ATen.h>

#include "io/safetensors_header.h"
#include "io/weight_set.h"

namespace shotchain::io {
namespace {

// At most this many names of one kind in the message; the rest are counted.
constexpr std::size_t kNamesPerKind = 8;

void appendKind(std::string& message, const std::vector<std::string>& problems) {
  for (std::size_t i = 0; i < problems.size() && i < kNamesPerKind; ++i) message += "\n  " + problems[i];
  if (problems.size() > kNamesPerKind)
    message += "\n  … and " + std::to_string(problems.size() - kNamesPerKind) + " more like it";
}

}  // namespace

at::ScalarType matmulLoadDtype(const WeightInfo* probe, bool halfStaysHalf) {
  if (!probe) return at::kFloat;
  switch (probe->dtype) {
    case DType::F16:
      return halfStaysHalf ? at::kHalf : at::kBFloat16;
    case DType::BF16:
    case DType::F8_E4M3:
    case DType::F8_E5M2:
      return at::kBFloat16;
    case DType::F64:
      return at::kDouble;
    case DType::U8:
      return probe->ggml && isBlockQuantised(*probe->ggml) ? at::kBFloat16 : at::kFloat;
    default:
      return at::kFloat;
  }
}

StrictWeightLoader::StrictWeightLoader(const WeightSet& weights, std::string model)
    : weights_(weights), model_(std::move(model)) {}

void StrictWeightLoader::require(const std::string& name, const std::vector<std::int64_t>& shape, at::ScalarType as,
                                 const std::string& stored) {
  required_.push_back({name, stored.empty() ? name : stored, shape, as});
}

void StrictWeightLoader::tolerate(std::function<bool(const std::string&)> unused) {
  tolerated_.push_back(std::move(unused));
}

void StrictWeightLoader::requireStoredFloat8(const std::string& name, const std::vector<std::int64_t>& shape) {
  required_.push_back({name, name, shape, at::kFloat8_e4m3fn, Required::Kept::Float8});
}

void StrictWeightLoader::requireStoredGgml(const std::string& name, const std::vector<std::int64_t>& shape) {
  required_.push_back({name, name, shape, at::kByte, Required::Kept::Ggml});
}

std::map<std::string, at::Tensor> StrictWeightLoader::finish(c10::Device device) const {
  std::vector<std::string> missing, misshapen, unexpected;
  std::set<std::string> used;
  for (const Required& r : required_) {
    used.insert(r.stored);
    const WeightInfo* info = weights_.find(r.stored);
    if (info == nullptr) {
      missing.push_back("tensor \"" + r.stored + "\" is missing");
      continue;
    }
    const std::vector<std::uint64_t> expected(r.shape.begin(), r.shape.end());
    if (info->shape != expected)
      misshapen.push_back("tensor \"" + r.stored + "\" has shape " + formatShape(info->shape) +
                          " but the config needs " + formatShape(expected));
  }
  for (const WeightInfo& info : weights_.weights()) {
    if (used.contains(info.name)) continue;
    bool fine = false;
    for (const auto& tolerated : tolerated_) fine = fine || tolerated(info.name);
    if (!fine) unexpected.push_back("unexpected tensor \"" + info.name + "\"");
  }
  if (!missing.empty() || !misshapen.empty() || !unexpected.empty()) {
    std::string message = weights_.label() + ": not " + model_ + " (" + std::to_string(missing.size()) + " missing, " +
                          std::to_string(misshapen.size()) + " with another shape, " +
                          std::to_string(unexpected.size()) + " unexpected):";
    appendKind(message, missing);
    appendKind(message, misshapen);
    appendKind(message, unexpected);
    throw std::runtime_error(message);
  }
  std::map<std::string, at::Tensor> tensors;
  for (const Required& r : required_) {
    if (r.kept == Required::Kept::Converted) {
      tensors[r.name] = weights_.load(r.stored, r.as).to(device).contiguous();
    } else if (r.kept == Required::Kept::Float8) {
      const WeightSet::StoredFloat8 stored = weights_.loadStoredFloat8(r.stored);
      tensors[r.name] = stored.codes.to(device).contiguous();
      tensors[r.name + "_scale"] = stored.scale.to(device).contiguous();
    } else {
      const WeightSet::StoredGgml stored = weights_.loadStoredGgml(r.stored);
      tensors[r.name] = stored.blocks.to(device).contiguous();
      tensors[r.name + "_ggml"] = at::scalar_tensor(static_cast<std::int64_t>(stored.type), at::kLong).to(device);
    }
  }
  return tensors;
}

}  // namespace shotchain::io
