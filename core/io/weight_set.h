#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

#include "io/dtype.h"

namespace shotchain::io {

class PtCheckpoint;
class SafetensorsFile;
struct PtTensorRecord;
struct TensorEntry;

// One model tensor as the model sees it (prefix stripped, quantisation scales folded away).
struct WeightInfo {
  std::string name;
  DType dtype = DType::F32;  // stored dtype
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  std::string scaleName;  // stored name of its dequantisation scale, if any
  bool perRowScale = false;
};

// A model's weights: one safetensors file, a sharded checkpoint (*.safetensors.index.json) or a
// PyTorch zip checkpoint (.pt, .pth; io/pt_checkpoint.h) whose state dict is `stateDict` or the
// default one (choosePtStateDict).
// Validates everything on open; hides format details from models:
//  - strips a leading "model.diffusion_model." when most keys carry it (others are dropped);
//  - folds scaled-fp8 scales: legacy (`scaled_fp8` marker + `<layer>.scale_weight`) and newer
//    (`<layer>.weight_scale` with `<layer>.comfy_quant` or `_quantization_metadata`), scalar or
//    per-row; refuses other quantisation formats by name;
//  - refuses other pickle checkpoints (.ckpt, .bin, .pkl).
class WeightSet {
 public:
  static WeightSet open(const std::filesystem::path& path, std::string_view stateDict = {});

  const std::string& label() const { return label_; }
  const std::vector<WeightInfo>& weights() const { return weights_; }  // sorted by name
  const WeightInfo* find(std::string_view name) const;
  // Metadata of the (first) file.
  const std::map<std::string, std::string>& metadata() const;
  std::uint64_t totalBytes() const { return totalBytes_; }
  std::size_t fileCount() const { return checkpoint_ ? 1 : files_.size(); }
  const std::string& strippedPrefix() const { return strippedPrefix_; }
  std::size_t droppedKeys() const { return droppedKeys_; }
  // "none", "fp8 (unscaled)", "scaled_fp8 (F8_E4M3)", "comfy_quant float8_e4m3fn_rowwise" …
  const std::string& quantisation() const { return quantisation_; }
  // A .pt/.pth file: the checkpoint and the key of the state dict read ("" for the top level).
  const PtCheckpoint* checkpoint() const { return checkpoint_.get(); }
  const std::string& stateDictKey() const { return stateDictKey_; }

  // The tensor, dequantised and converted to `as`. Throws SafetensorsError for unknown names.
  at::Tensor load(std::string_view name, at::ScalarType as) const;
  // An fp8 tensor as stored (F8_E4M3 or F8_E5M2 of a safetensors file): its codes as at::kFloat8_e4m3fn /
  // kFloat8_e5m2 and its scale as float32 (a scalar, or [rows, 1] per row; 1 when the file has none), so that
  // codes·scale is what load() gives. Throws SafetensorsError naming the tensor when it is not stored so.
  struct StoredFloat8 {
    at::Tensor codes, scale;
  };
  StoredFloat8 loadStoredFloat8(std::string_view name) const;
  // Whether `name` is an fp8 tensor of a safetensors file (what loadStoredFloat8 reads).
  bool storedAsFloat8(std::string_view name) const;

 private:
  struct Source {
    std::size_t file = 0;
    const TensorEntry* entry = nullptr;
    const TensorEntry* scale = nullptr;
    const PtTensorRecord* record = nullptr;  // a .pt tensor instead of entry
  };
  static WeightSet openCheckpoint(const std::filesystem::path& path, std::string_view stateDict);
  std::string label_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::vector<WeightInfo> weights_;
  std::map<std::string, Source, std::less<>> sources_;
  std::uint64_t totalBytes_ = 0;
  std::string strippedPrefix_;
  std::size_t droppedKeys_ = 0;
  std::string quantisation_ = "none";
  std::shared_ptr<const PtCheckpoint> checkpoint_;
  std::string stateDictKey_;
};

}  // namespace shotchain::io
