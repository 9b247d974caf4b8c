#include "io/weight_set.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <ATen/ATen.h>

#include "io/gguf_file.h"
#include "io/pt_checkpoint.h"
#include "io/safetensors_reader.h"
#include "io/strict_json.h"
#include "util/bounded_file.h"

namespace shotchain::io {
namespace {

constexpr std::string_view kModelPrefix = "model.diffusion_model.";
constexpr std::uint64_t kMaxIndexBytes = 100'000'000;

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool isAuxiliary(std::string_view name) {
  return name == "scaled_fp8" || endsWith(name, ".scale_weight") || endsWith(name, ".weight_scale") ||
         endsWith(name, ".scale_input") || endsWith(name, ".input_scale") || endsWith(name, ".comfy_quant");
}

std::string layerOf(std::string_view name) {
  return endsWith(name, ".weight") ? std::string(name.substr(0, name.size() - 7)) : std::string(name);
}

// Formats we can dequantise; everything else is refused by name.
bool knownFormat(const std::string& format) {
  return format == "float8_e4m3fn" || format == "float8_e4m3fn_rowwise" || format == "float8_e5m2" ||
         format == "float8_e5m2_rowwise";
}

bool plainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

std::string readSmallFile(const std::filesystem::path& path, const std::string& label) {
  try {
    return util::readRegularFile(path, kMaxIndexBytes);
  } catch (const std::runtime_error& e) {
    throw SafetensorsError(label + ": index: " + e.what());
  }
}

}  // namespace

std::string storedTypeName(const WeightInfo& info) {
  return info.ggml ? std::string(ggmlTraits(*info.ggml).name) : std::string(dtypeName(info.dtype));
}

const std::map<std::string, std::string>& WeightSet::metadata() const {
  static const std::map<std::string, std::string> kNone;
  if (gguf_) return gguf_->header().metadata;
  return files_.empty() ? kNone : files_.front()->header().metadata;
}

const WeightInfo* WeightSet::find(std::string_view name) const {
  const auto it = std::lower_bound(weights_.begin(), weights_.end(), name,
                                   [](const WeightInfo& w, std::string_view n) { return w.name < n; });
  return it != weights_.end() && it->name == name ? &*it : nullptr;
}

WeightSet WeightSet::openCheckpoint(const std::filesystem::path& path, std::string_view stateDict) {
  WeightSet set;
  set.label_ = path.filename().string();
  set.checkpoint_ = PtCheckpoint::open(path);
  const PtStateDict& dict = set.checkpoint_->stateDict(stateDict);
  set.stateDictKey_ = dict.key;
  set.strippedPrefix_ = dict.strippedPrefix;
  for (const PtTensorRecord& record : dict.tensors) {
    const std::uint64_t bytes = record.elements() * (dtypeBits(record.dtype) / 8);
    set.totalBytes_ += bytes;
    set.weights_.push_back(WeightInfo{record.name, record.dtype, record.shape(), bytes, {}, false, std::nullopt});
    set.sources_.emplace(record.name, Source{0, nullptr, nullptr, &record});
  }
  std::sort(set.weights_.begin(), set.weights_.end(),
            [](const WeightInfo& a, const WeightInfo& b) { return a.name < b.name; });
  return set;
}

WeightSet WeightSet::openGguf(const std::filesystem::path& path) {
  WeightSet set;
  set.label_ = path.filename().string();
  set.gguf_ = GgufFile::open(path);
  const std::vector<GgufTensorInfo>& tensors = set.gguf_->header().tensors;
  std::size_t prefixed = 0;
  for (const GgufTensorInfo& t : tensors) prefixed += t.name.starts_with(kModelPrefix) ? 1 : 0;
  const bool strip = prefixed * 2 > tensors.size();
  if (strip) set.strippedPrefix_ = kModelPrefix;
  std::map<GgmlType, std::uint64_t> bytesByType;
  for (const GgufTensorInfo& t : tensors) {
    set.totalBytes_ += t.bytes;
    if (strip && !t.name.starts_with(kModelPrefix)) {
      ++set.droppedKeys_;
      continue;
    }
    std::string name = strip ? t.name.substr(kModelPrefix.size()) : t.name;
    if (set.sources_.contains(name))
      throw SafetensorsError(set.label_ +
                             ": tensor "
                             " + name + "
                             " appears both with and without the prefix " +
                             std::string(kModelPrefix));
    DType dtype = t.type == GgmlType::F32    ? DType::F32
                  : t.type == GgmlType::F16  ? DType::F16
                  : t.type == GgmlType::BF16 ? DType::BF16
                                             : DType::U8;
    if (isBlockQuantised(t.type)) bytesByType[t.type] += t.bytes;
    set.weights_.push_back(WeightInfo{name, dtype, t.shape, t.bytes, {}, false, t.type});
    set.sources_.emplace(std::move(name), Source{0, nullptr, nullptr, nullptr, &t});
  }
  if (!bytesByType.empty()) {
    std::vector<std::pair<std::uint64_t, GgmlType>> order;
    for (const auto& [type, bytes] : bytesByType) order.emplace_back(bytes, type);
    std::sort(order.rbegin(), order.rend());
    set.quantisation_ = "GGUF";
    for (std::size_t i = 0; i < order.size(); ++i)
      set.quantisation_ += (i == 0 ? " " : ", ") + std::string(ggmlTraits(order[i].second).name);
  }
  std::sort(set.weights_.begin(), set.weights_.end(),
            [](const WeightInfo& a, const WeightInfo& b) { return a.name < b.name; });
  return set;
}

WeightSet WeightSet::open(const std::filesystem::path& path, std::string_view stateDict) {
  if (isPtCheckpointPath(path)) return openCheckpoint(path, stateDict);
  if (isGgufPath(path)) return openGguf(path);
  WeightSet set;
  set.label_ = path.filename().string();
  refusePickleFile(path);

  // name (as stored) → (file, entry)
  std::map<std::string, std::pair<std::size_t, const TensorEntry*>> stored;
  if (endsWith(set.label_, ".index.json")) {
    const nlohmann::json index = parseJsonStrict(set.label_, "index", readSmallFile(path, set.label_), 8);
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      throw SafetensorsError(set.label_ + ": index: expected an object with a \"weight_map\" object");
    std::map<std::string, std::size_t> shardIndex;
    std::map<std::string, std::string> expectedShard;  // tensor → shard
    for (const auto& [tensor, shard] : index["weight_map"].items()) {
      if (!shard.is_string())
        throw SafetensorsError(set.label_ + ": index: shard of \"" + tensor + "\" is not a string");
      const std::string shardName = shard.get<std::string>();
      if (!plainFileName(shardName))
        throw SafetensorsError(set.label_ + ": index: shard \"" + shardName + "\" of \"" + tensor +
                               "\" must be a plain file name in the same folder (no path separators or ..)");
      expectedShard.emplace(tensor, shardName);
      if (!shardIndex.contains(shardName)) {
        shardIndex.emplace(shardName, set.files_.size());
        set.files_.push_back(SafetensorsFile::open(path.parent_path() / shardName));
      }
    }
    if (set.files_.empty()) throw SafetensorsError(set.label_ + ": index: weight_map is empty");
    for (const auto& [shardName, fileIndex] : shardIndex) {
      for (const TensorEntry& entry : set.files_[fileIndex]->header().tensors) {
        const auto it = expectedShard.find(entry.name);
        if (it == expectedShard.end())
          throw SafetensorsError(set.label_ + ": index: tensor \"" + entry.name + "\" of " + shardName +
                                 " is not in the weight_map");
        if (it->second != shardName)
          throw SafetensorsError(set.label_ + ": index: tensor \"" + entry.name + "\" is in " + shardName +
                                 " but the weight_map says " + it->second);
        stored.emplace(entry.name, std::make_pair(fileIndex, &entry));
      }
    }
    for (const auto& [tensor, shardName] : expectedShard)
      if (!stored.contains(tensor))
        throw SafetensorsError(set.label_ + ": index: tensor \"" + tensor + "\" is missing from " + shardName);
  } else {
    set.files_.push_back(SafetensorsFile::open(path));
    for (const TensorEntry& entry : set.files_.front()->header().tensors)
      stored.emplace(entry.name, std::make_pair(0, &entry));
  }

  // Prefix stripping.
  std::size_t prefixed = 0;
  for (const auto& [name, where] : stored) prefixed += name.starts_with(kModelPrefix) ? 1 : 0;
  std::map<std::string, std::pair<std::size_t, const TensorEntry*>> named;
  if (prefixed * 2 > stored.size()) {
    set.strippedPrefix_ = kModelPrefix;
    for (const auto& [name, where] : stored) {
      if (name.starts_with(kModelPrefix))
        named.emplace(name.substr(kModelPrefix.size()), where);
      else
        ++set.droppedKeys_;
    }
  } else {
    named = std::move(stored);
  }

  // Quantisation formats: legacy marker, per-layer comfy_quant tensors, or file metadata.
  std::map<std::string, std::string> layerFormat;
  const auto quantMeta = set.metadata().find("_quantization_metadata");
  if (quantMeta != set.metadata().end()) {
    const nlohmann::json meta = parseJsonStrict(set.label_, "_quantization_metadata", quantMeta->second, 8);
    if (meta.is_object() && meta.contains("layers") && meta["layers"].is_object())
      for (const auto& [layer, spec] : meta["layers"].items())
        if (spec.is_object() && spec.contains("format") && spec["format"].is_string())
          layerFormat[layer.starts_with(kModelPrefix) ? layer.substr(kModelPrefix.size()) : layer] =
              spec["format"].get<std::string>();
  }
  for (const auto& [name, where] : named) {
    if (!endsWith(name, ".comfy_quant")) continue;
    const std::string_view raw = set.files_[where.first]->rawBytes(*where.second);
    const nlohmann::json spec = parseJsonStrict(set.label_, "tensor \"" + name + "\"", raw, 4);
    if (!spec.is_object() || !spec.contains("format") || !spec["format"].is_string())
      throw SafetensorsError(set.label_ + ": tensor \"" + name + "\": comfy_quant JSON has no \"format\" string");
    layerFormat[name.substr(0, name.size() - std::string_view(".comfy_quant").size())] =
        spec["format"].get<std::string>();
  }
  std::set<std::string> formats;
  for (const auto& [layer, format] : layerFormat) {
    if (!knownFormat(format))
      throw SafetensorsError(set.label_ + ": layer \"" + layer + "\": quantisation format \"" + format +
                             "\" is not supported (supported: float8_e4m3fn, float8_e4m3fn_rowwise, float8_e5m2)");
    formats.insert(format);
  }
  const auto marker = named.find("scaled_fp8");
  if (marker != named.end()) {
    set.quantisation_ = "scaled_fp8 (" +
                        std::string(isFloat8(marker->second.second->dtype) ? dtypeName(marker->second.second->dtype)
                                                                           : std::string_view("F8_E4M3")) +
                        ")";
  } else if (!formats.empty()) {
    set.quantisation_ = "comfy_quant";
    for (const std::string& format : formats) set.quantisation_ += " " + format;
  }

  bool anyFloat8 = false;
  for (const auto& [name, where] : named) {
    const TensorEntry& entry = *where.second;
    set.totalBytes_ += entry.bytes();
    if (isAuxiliary(name)) continue;
    WeightInfo info{name, entry.dtype, entry.shape, entry.bytes(), {}, false, std::nullopt};
    Source source{where.first, &entry, nullptr};
    const std::string layer = layerOf(name);
    for (const char* suffix : {".scale_weight", ".weight_scale"}) {
      const auto scale = named.find(layer + suffix);
      if (scale == named.end() || name != layer + ".weight") continue;
      if (!isFloat8(entry.dtype))
        throw SafetensorsError(set.label_ + ": tensor \"" + name + "\": has a scale but is stored as " +
                               std::string(dtypeName(entry.dtype)) + " (only fp8 quantisation is supported)");
      const TensorEntry& scaleEntry = *scale->second.second;
      const std::uint64_t rows = entry.shape.empty() ? 1 : entry.shape.front();
      if (scaleEntry.elements == 1) {
        info.perRowScale = false;
      } else if (scaleEntry.elements == rows && !entry.shape.empty()) {
        info.perRowScale = true;
      } else {
        throw SafetensorsError(set.label_ + ": tensor \"" + scale->first + "\": scale shape " +
                               formatShape(scaleEntry.shape) + " fits neither a scalar nor the " +
                               std::to_string(rows) + " rows of " + formatShape(entry.shape) +
                               " (block-wise scales are not supported)");
      }
      const auto format = layerFormat.find(layer);
      if (format != layerFormat.end() && endsWith(format->second, "_rowwise") != info.perRowScale)
        throw SafetensorsError(set.label_ + ": layer \"" + layer + "\": format " + format->second +
                               " does not match its scale shape " + formatShape(scaleEntry.shape));
      info.scaleName = scale->first;
      source.scale = &scaleEntry;
    }
    if (isFloat8(entry.dtype)) {
      anyFloat8 = true;
      if (entry.dtype != DType::F8_E4M3 && entry.dtype != DType::F8_E5M2)
        throw SafetensorsError(set.label_ + ": tensor \"" + name + "\": dtype " + std::string(dtypeName(entry.dtype)) +
                               " is not supported (only F8_E4M3 and F8_E5M2)");
    }
    set.sources_.emplace(name, source);
    set.weights_.push_back(std::move(info));
  }
  if (anyFloat8 && set.quantisation_ == "none") set.quantisation_ = "fp8 (unscaled)";
  return set;
}

at::Tensor WeightSet::load(std::string_view name, at::ScalarType as) const {
  const auto it = sources_.find(name);
  if (it == sources_.end())
    throw SafetensorsError(label_ + ": tensor \"" + std::string(name) + "\": not in these weights");
  const Source& source = it->second;
  if (source.gguf != nullptr) return gguf_->tensor(*source.gguf, as);
  if (source.record != nullptr) {
    at::Tensor tensor = checkpoint_->tensor(*source.record);
    return tensor.scalar_type() == as ? tensor : tensor.to(as);
  }
  const SafetensorsFile& file = *files_[source.file];
  if (source.scale == nullptr) return file.tensor(*source.entry, as);
  at::Tensor weight = file.tensor(*source.entry, at::kFloat);
  at::Tensor scale = file.tensor(*source.scale, at::kFloat);
  if (scale.numel() == 1) {
    weight = weight * scale.reshape({});
  } else {
    std::vector<int64_t> shape(static_cast<std::size_t>(weight.dim()), 1);
    shape[0] = weight.size(0);
    weight = weight * scale.reshape(shape);
  }
  return weight.to(as);
}

bool WeightSet::storedAsGgml(std::string_view name) const {
  const auto it = sources_.find(name);
  return it != sources_.end() && it->second.gguf != nullptr && isBlockQuantised(it->second.gguf->type);
}

WeightSet::StoredGgml WeightSet::loadStoredGgml(std::string_view name) const {
  if (!storedAsGgml(name))
    throw SafetensorsError(label_ + ": tensor \"" + std::string(name) + "\": not a block-quantised GGUF tensor");
  const GgufTensorInfo& info = *sources_.find(name)->second.gguf;
  return {gguf_->blocks(info), info.type};
}

std::uint64_t WeightSet::ggmlBlockBytes() const {
  std::uint64_t bytes = 0;
  for (const WeightInfo& info : weights_)
    if (info.ggml && isBlockQuantised(*info.ggml)) bytes += info.bytes;
  return bytes;
}

bool WeightSet::storedAsFloat8(std::string_view name) const {
  const auto it = sources_.find(name);
  if (it == sources_.end() || it->second.record != nullptr || it->second.entry == nullptr) return false;
  const DType dtype = it->second.entry->dtype;
  return dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2;
}

WeightSet::StoredFloat8 WeightSet::loadStoredFloat8(std::string_view name) const {
  if (!storedAsFloat8(name))
    throw SafetensorsError(label_ + ": tensor \"" + std::string(name) + "\": not stored as F8_E4M3 or F8_E5M2");
  const Source& source = sources_.find(name)->second;
  const SafetensorsFile& file = *files_[source.file];
  StoredFloat8 out;
  const at::ScalarType kind = source.entry->dtype == DType::F8_E4M3 ? at::kFloat8_e4m3fn : at::kFloat8_e5m2;
  const std::string_view raw = file.rawBytes(*source.entry);
  std::vector<std::int64_t> shape(source.entry->shape.begin(), source.entry->shape.end());
  out.codes = at::empty(shape, at::TensorOptions().dtype(at::kByte));
  if (!raw.empty()) std::memcpy(out.codes.data_ptr(), raw.data(), raw.size());
  file.releasePages(*source.entry);
  out.codes = out.codes.view(kind);
  if (source.scale == nullptr) {
    out.scale = at::ones({}, at::kFloat);
  } else {
    const at::Tensor scale = file.tensor(*source.scale, at::kFloat);
    out.scale = scale.numel() == 1 ? scale.reshape({}) : scale.reshape({out.codes.size(0), 1});
  }
  return out;
}

}  // namespace shotchain::io
