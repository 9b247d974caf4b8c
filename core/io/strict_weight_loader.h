#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace shotchain::io {

class WeightSet;
struct WeightInfo;

// The dtype a model computes its matmuls in, from the stored dtype of one of its matmul weights
// (`probe`; null: float32): fp8, bf16 and GGUF block-quantised → bfloat16, f16 → half (or bfloat16 when the family
// overflows in half, as UMT5), f64 → double, else float32. Loaders and memory models share it.
at::ScalarType matmulLoadDtype(const WeightInfo* probe, bool halfStaysHalf);

// Loads a model's state dict strictly, for every model family: each tensor the model needs is
// declared with require(); finish() first checks all of them against the file's headers (nothing is
// read yet) and throws one std::runtime_error that names the file and lists every missing tensor,
// every wrong shape and every tensor the model does not use; only then are the tensors read,
// converted and moved to the device.
class StrictWeightLoader {
 public:
  // `model` says what the file should be, for the error: "a Wan 2.1 VAE with config {…}".
  StrictWeightLoader(const WeightSet& weights, std::string model);

  // `name`: the model's own name (the key of finish()'s map); `stored`: the file's name when it
  // differs (another naming convention). The tensor is loaded as `as` (dequantised, converted).
  void require(const std::string& name, const std::vector<std::int64_t>& shape, at::ScalarType as,
               const std::string& stored = {});
  // An fp8 tensor kept as stored (WeightSet::loadStoredFloat8): finish() gives its codes under `name` and its
  // scale under `name` + "_scale".
  void requireStoredFloat8(const std::string& name, const std::vector<std::int64_t>& shape);
  // A block-quantised GGUF tensor kept as stored (WeightSet::loadStoredGgml): finish() gives its blocks' bytes under
  // `name` (uint8 [rows, bytes per row]) and its ggml type id under `name` + "_ggml" (an int64 scalar).
  void requireStoredGgml(const std::string& name, const std::vector<std::int64_t>& shape);
  // Tensors in the file that are not the model's but may be there (e.g. a tied output head).
  void tolerate(std::function<bool(const std::string& stored)> unused);

  std::map<std::string, at::Tensor> finish(c10::Device device) const;

 private:
  struct Required {
    std::string name;
    std::string stored;
    std::vector<std::int64_t> shape;
    at::ScalarType as;
    enum class Kept { Converted, Float8, Ggml } kept = Kept::Converted;
  };
  const WeightSet& weights_;
  std::string model_;
  std::vector<Required> required_;
  std::vector<std::function<bool(const std::string&)>> tolerated_;
};

}  // namespace shotchain::io
