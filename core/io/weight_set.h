#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

#include "io/dtype.h"
#include "io/ggml_types.h"

namespace shotchain::io {

class GgufFile;
struct GgufTensorInfo;
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
  std::optional<GgmlType> ggml;  // a GGUF file's tensor: its ggml type (dtype is U8 for block-quantised ones)
};

// "Q4_K" for a GGUF tensor's type, else the dtype's name ("BF16").
std::string storedTypeName(const WeightInfo& info);

// A model's weights: one safetensors file, a sharded checkpoint (*.safetensors.index.json) or a
// PyTorch zip checkpoint (.pt, .pth; io/pt_checkpoint.h) whose state dict is `stateDict` or the
// default one (choosePtStateDict), or a GGUF file (.gguf; io/gguf_file.h).
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
  std::size_t fileCount() const { return checkpoint_ || gguf_ ? 1 : files_.size(); }
  const std::string& strippedPrefix() const { return strippedPrefix_; }
  std::size_t droppedKeys() const { return droppedKeys_; }
  // "none", "fp8 (unscaled)", "scaled_fp8 (F8_E4M3)", "comfy_quant float8_e4m3fn_rowwise", "GGUF Q4_K, Q6_K" …
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
  // A block-quantised GGUF tensor as stored: its blocks' bytes, uint8 [rows, bytes per row] (rows: the shape's outer
  // dimensions), and its type, so that dequantiseGgml(blocks, type, shape, …) is what load() gives.
  struct StoredGgml {
    at::Tensor blocks;
    GgmlType type = GgmlType::F32;
  };
  StoredGgml loadStoredGgml(std::string_view name) const;
  // Whether `name` is a block-quantised tensor of a GGUF file (what loadStoredGgml reads).
  bool storedAsGgml(std::string_view name) const;
  // Bytes the file's block-quantised tensors take as stored (0 for other files).
  std::uint64_t ggmlBlockBytes() const;

 private:
  struct Source {
    std::size_t file = 0;
    const TensorEntry* entry = nullptr;
    const TensorEntry* scale = nullptr;
    const PtTensorRecord* record = nullptr;  // a .pt tensor instead of entry
    const GgufTensorInfo* gguf = nullptr;    // a GGUF tensor instead of entry
  };
  static WeightSet openCheckpoint(const std::filesystem::path& path, std::string_view stateDict);
  static WeightSet openGguf(const std::filesystem::path& path);
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
  std::shared_ptr<const GgufFile> gguf_;
};

}  // namespace shotchain::io
