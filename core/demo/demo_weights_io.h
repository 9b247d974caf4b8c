#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::models {
class WanVae;
class Umt5Encoder;
struct WanConfig;
struct Umt5Config;
}  // namespace shotchain::models

namespace shotchain::demo {

using NamedWeights = std::vector<std::pair<std::string, at::Tensor>>;

// Atomic safetensors writes with a `config` metadata entry the loaders detect.
// DiT: official names, float32, config = WanConfig::toJson().
void saveDit(const std::filesystem::path& path, const NamedWeights& weights, const models::WanConfig& config);
// VAE: official names, config = WanVaeConfig::toJson(), plus the latent statistics
// (kWanVaeLatentMeanKey / kWanVaeLatentStdKey).
void saveVae(const std::filesystem::path& path, const models::WanVae& vae);
// UMT5 encoder: official (Wan) names, config = the constructor arguments as JSON.
void saveUmt5(const std::filesystem::path& path, const models::Umt5Encoder& encoder);
std::string umt5ConfigJson(const models::Umt5Config& config);

}  // namespace shotchain::demo
