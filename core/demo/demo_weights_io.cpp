#include "demo/demo_weights_io.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "io/safetensors_writer.h"
#include "models/umt5/umt5.h"
#include "models/wan/wan_config.h"
#include "models/wan/wan_vae.h"

namespace shotchain::demo {
namespace {

io::NamedTensors detached(const NamedWeights& weights) {
  io::NamedTensors out;
  for (const auto& [name, tensor] : weights)
    out.emplace_back(name, tensor.detach().to(at::kCPU, at::kFloat).contiguous());
  return out;
}

}  // namespace

void saveDit(const std::filesystem::path& path, const NamedWeights& weights, const models::WanConfig& config) {
  io::saveSafetensors(path, detached(weights), {{"config", config.toJson()}, {"format", "pt"}});
}

void saveVae(const std::filesystem::path& path, const models::WanVae& vae) {
  const nlohmann::json mean = vae.latentMean(), deviation = vae.latentStd();
  io::saveSafetensors(path, detached(vae.namedParameters()),
                      {{"config", vae.config().toJson()},
                       {"format", "pt"},
                       {models::kWanVaeLatentMeanKey, mean.dump()},
                       {models::kWanVaeLatentStdKey, deviation.dump()}});
}

std::string umt5ConfigJson(const models::Umt5Config& c) {
  const nlohmann::json json = {{"vocab", c.vocab},
                               {"dim", c.dim},
                               {"dim_attn", c.dimAttn},
                               {"dim_ffn", c.dimFfn},
                               {"num_heads", c.numHeads},
                               {"num_layers", c.numLayers},
                               {"num_buckets", c.numBuckets},
                               {"max_distance", c.maxDistance},
                               {"eps", c.eps}};
  return json.dump();
}

void saveUmt5(const std::filesystem::path& path, const models::Umt5Encoder& encoder) {
  io::saveSafetensors(path, detached(encoder.namedParameters()),
                      {{"config", umt5ConfigJson(encoder.config())}, {"format", "pt"}});
}

}  // namespace shotchain::demo
