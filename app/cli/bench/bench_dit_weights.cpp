#include "cli/bench/bench_dit_weights.h"

#include <chrono>
#include <stdexcept>

#include "io/safetensors_header.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"

namespace shotchain::cli {
namespace {

constexpr const char* kLayersPrefix = "14b-layers:";

}  // namespace

BenchDitSize parseBenchDitSize(const std::string& size) {
  if (size == "1.3b" || size == "14b") return {size, models::WanConfig::preset(size)};
  if (size.rfind(kLayersPrefix, 0) == 0) {
    const std::string count = size.substr(std::string(kLayersPrefix).size());
    BenchDitSize layers{size, models::WanConfig::preset("14b")};
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(count, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != count.size() || n < 1 || n > layers.config.numLayers)
      throw std::invalid_argument("--size: \"" + size + "\": N of 14b-layers:N is 1 to " +
                                  std::to_string(layers.config.numLayers));
    layers.config.numLayers = n;
    return layers;
  }
  throw std::invalid_argument("--size: 1.3b, 14b or 14b-layers:N, not \"" + size + "\"");
}

std::string benchDitFileName(const BenchDitSize& size, at::ScalarType dtype) {
  std::string name = size.name;
  if (const std::size_t colon = name.find(':'); colon != std::string::npos) name.erase(colon, 1);
  return "wan_random_" + name + "_" + (dtype == at::kBFloat16 ? "bfloat16" : "float32") + ".safetensors";
}

std::string benchDitMismatch(const std::filesystem::path& file, const BenchDitSize& size, at::ScalarType dtype) {
  try {
    const io::WeightSet weights = io::WeightSet::open(file);  // the header, checked against the file's size
    const auto config = weights.metadata().find("config");
    if (config == weights.metadata().end() || config->second != size.config.toJson())
      return "its config is another DiT's";
    const std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected =
        models::wanParameterShapes(size.config);
    if (weights.weights().size() != expected.size())
      return std::to_string(weights.weights().size()) + " tensors, not " + std::to_string(expected.size());
    const io::DType matmul = io::safetensorsDTypeOf(dtype);
    for (const auto& [name, shape] : expected) {
      const io::WeightInfo* info = weights.find(name);
      if (!info) return name + " is missing";
      if (info->shape != std::vector<std::uint64_t>(shape.begin(), shape.end()))
        return name + " is " + io::formatShape(info->shape);
      const bool blockMatmul = name.starts_with("blocks.") && name.ends_with(".weight") && shape.size() == 2;
      if (blockMatmul && info->dtype != matmul) return name + " is " + io::storedTypeName(*info);
    }
    return "";
  } catch (const std::exception& error) {
    return error.what();
  }
}

BenchDitWeights ensureBenchDitWeights(const BenchDitSize& size, at::ScalarType dtype,
                                      const std::filesystem::path& dir) {
  BenchDitWeights weights;
  weights.file = dir / benchDitFileName(size, dtype);
  if (!std::filesystem::exists(weights.file) || !benchDitMismatch(weights.file, size, dtype).empty()) {
    const auto start = std::chrono::steady_clock::now();
    std::filesystem::create_directories(dir);
    models::WanLoadOptions options;
    options.computeDtype = dtype;
    const models::WanModel dit = models::WanModel::random(size.config, 1, options);
    io::saveSafetensors(weights.file, dit.namedParameters(), {{"config", size.config.toJson()}});
    weights.written = true;
    weights.writeSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (const std::string problem = benchDitMismatch(weights.file, size, dtype); !problem.empty())
      throw std::runtime_error(weights.file.string() + ": written, yet " + problem);
  }
  weights.bytes = std::filesystem::file_size(weights.file);
  return weights;
}

}  // namespace shotchain::cli
