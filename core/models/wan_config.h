#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// Constructor arguments of the official WanModel (wan21.md §1.1).
struct WanConfig {
  std::string modelType = "t2v";
  std::array<std::int64_t, 3> patch{1, 2, 2};
  std::int64_t textLen = 512;
  std::int64_t inDim = 16;
  std::int64_t dim = 1536;
  std::int64_t ffnDim = 8960;
  std::int64_t freqDim = 256;
  std::int64_t textDim = 4096;
  std::int64_t outDim = 16;
  std::int64_t numHeads = 12;
  std::int64_t numLayers = 30;
  double eps = 1e-6;
  bool qkNorm = true;
  bool crossAttnNorm = true;

  std::int64_t headDim() const { return dim / numHeads; }
  std::int64_t patchVolume() const { return patch[0] * patch[1] * patch[2]; }
  std::uint64_t parameterCount() const;
  // "1.3B", "14B", "tiny" (the golden test size) or "custom".
  std::string variant() const;
  // Throws std::invalid_argument describing the first inconsistency.
  void check() const;

  // The official config.json / golden "config" field names.
  std::string toJson() const;
  static WanConfig fromJson(std::string_view json);  // throws std::invalid_argument
  // "tiny", "1.3b", "14b"; throws std::invalid_argument for other names.
  static WanConfig preset(std::string_view name);
};

struct WanDetection {
  bool isWanDit = false;
  WanConfig config;
  std::string configSource;           // "metadata" or "tensor shapes"
  std::vector<std::string> problems;  // empty ⇒ loadable
};

// Detects a Wan 2.1 DiT and its configuration from tensor names and shapes (wan21.md §1.2), or
// from a "config" JSON in the file's metadata. Recognises I2V/FLF2V/VACE/Wan 2.2 files and
// reports them as problems ("not supported yet").
WanDetection detectWanConfig(const io::WeightSet& weights);

}  // namespace shotchain::models
