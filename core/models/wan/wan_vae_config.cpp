#include "models/wan/wan_vae_config.h"

#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/safetensors_header.h"
#include "io/strict_json.h"
#include "io/weight_set.h"
#include "models/wan/wan22_vae_layout.h"

namespace shotchain::models {
namespace {

using Json = nlohmann::json;
using Kind = WanVaeBlock::Kind;

std::string str(std::int64_t v) { return std::to_string(v); }

std::vector<std::int64_t> encoderDims(const WanVaeConfig& c) {
  std::vector<std::int64_t> dims{c.dim};
  for (const std::int64_t m : c.dimMult) dims.push_back(c.dim * m);
  return dims;
}

std::vector<std::int64_t> decoderDims(const WanVaeConfig& c) {
  std::vector<std::int64_t> dims{c.dim * c.dimMult.back()};
  for (auto it = c.dimMult.rbegin(); it != c.dimMult.rend(); ++it) dims.push_back(c.dim * *it);
  return dims;
}

}  // namespace

const std::array<double, 16> kWanVaeLatentMean{-0.7571, -0.7089, -0.9113, 0.1075,  -0.1745, 0.9653,  -0.1517, 1.5508,
                                               0.4134,  -0.0715, 0.5517,  -0.3632, -0.1922, -0.9497, 0.2503,  -0.2921};
const std::array<double, 16> kWanVaeLatentStd{2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
                                              3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160};

std::int64_t WanVaeConfig::spatialFactor() const { return patch() << (stages() - 1); }

std::int64_t WanVaeConfig::temporalFactor() const {
  std::int64_t factor = 1;
  for (const bool t : temporalDownsample) factor *= t ? 2 : 1;
  return factor;
}

std::int64_t WanVaeConfig::latentFrames(std::int64_t pixelFrames) const {
  const std::int64_t f = temporalFactor();
  if (pixelFrames < 1 || (pixelFrames - 1) % f != 0)
    throw std::invalid_argument("the Wan VAE needs " + str(f) + "k+1 frames (1, " + str(1 + f) + ", " + str(1 + 2 * f) +
                                ", …), got " + str(pixelFrames));
  return (pixelFrames - 1) / f + 1;
}

std::int64_t WanVaeConfig::pixelFrames(std::int64_t latent) const { return 1 + temporalFactor() * (latent - 1); }

std::uint64_t WanVaeConfig::parameterCount() const {
  std::uint64_t total = 0;
  for (const WanVaeParamSpec& spec : wanVaeParameterSpecs(*this)) {
    std::uint64_t n = 1;
    for (const std::int64_t s : spec.shape) n *= static_cast<std::uint64_t>(s);
    total += n;
  }
  return total;
}

std::string WanVaeConfig::variant() const {
  if (generation == 22) {
    const bool shape = zDim == 48 && dimMult == std::vector<std::int64_t>{1, 2, 4, 4} && numResBlocks == 2 &&
                       temporalDownsample == std::vector<bool>{false, true, true};
    if (shape && dim == 160 && decoderDim() == 256) return "wan2.2";
    if (shape && dim == 4 && decoderDim() == 8) return "tiny";
    return "custom";
  }
  const bool wanShape = zDim == 16 && dimMult == std::vector<std::int64_t>{1, 2, 4, 4} && numResBlocks == 2 &&
                        temporalDownsample == std::vector<bool>{false, true, true};
  if (wanShape && dim == 96) return "wan2.1";
  if (wanShape && dim == 8) return "tiny";
  return "custom";
}

void WanVaeConfig::check() const {
  if (generation != 21 && generation != 22) throw std::invalid_argument("VAE config: generation must be 21 or 22");
  if (decDim < 0 || (generation == 21 && decDim != 0))
    throw std::invalid_argument("VAE config: dec_dim is a Wan 2.2 VAE's (positive) decoder width");
  if (dim <= 0 || zDim <= 0 || numResBlocks <= 0) throw std::invalid_argument("VAE config: sizes must be positive");
  if (dimMult.size() < 2) throw std::invalid_argument("VAE config: dim_mult needs at least 2 entries");
  for (const std::int64_t m : dimMult)
    if (m <= 0) throw std::invalid_argument("VAE config: dim_mult entries must be positive");
  if (temporalDownsample.size() != dimMult.size() - 1)
    throw std::invalid_argument("VAE config: temperal_downsample needs " + str(stages() - 1) +
                                " entries (one per resample)");
  if (generation == 22) {
    if (const std::string problem = wan22VaeConfigProblem(*this); !problem.empty())
      throw std::invalid_argument(problem);
    return;
  }
  const auto dims = decoderDims(*this);
  for (std::size_t i = 1; i + 1 < dims.size(); ++i)
    if (dims[i] % 2 != 0) throw std::invalid_argument("VAE config: upsampled channel counts must be even");
}

std::string WanVaeConfig::toJson() const {
  Json json = {{"attn_scales", Json::array()},
               {"dim", dim},
               {"dim_mult", dimMult},
               {"dropout", 0.0},
               {"num_res_blocks", numResBlocks},
               {"temperal_downsample", temporalDownsample},
               {"z_dim", zDim}};
  if (generation == 22) json["dec_dim"] = decoderDim();  // only vae2_2's WanVAE_ takes it
  return json.dump();
}

WanVaeConfig WanVaeConfig::fromJson(std::string_view text) {
  Json json;
  try {
    json = io::parseJsonChecked<Json>(text, io::kMaxJsonDepth);
  } catch (const io::JsonRefused& error) {
    throw std::invalid_argument(std::string("VAE config: not valid JSON: ") + error.what());
  }
  if (!json.is_object()) throw std::invalid_argument("VAE config: expected a JSON object");
  WanVaeConfig config;
  auto integer = [&](const char* key, std::int64_t& into) {
    if (!json.contains(key)) return;
    if (!json[key].is_number_integer() || json[key].get<std::int64_t>() <= 0)
      throw std::invalid_argument(std::string("VAE config: \"") + key + "\" must be a positive integer");
    into = json[key].get<std::int64_t>();
  };
  integer("dim", config.dim);
  integer("z_dim", config.zDim);
  integer("num_res_blocks", config.numResBlocks);
  if (json.contains("dec_dim")) {
    config.generation = 22;
    integer("dec_dim", config.decDim);
  }
  if (json.contains("dim_mult")) {
    const Json& m = json["dim_mult"];
    if (!m.is_array()) throw std::invalid_argument("VAE config: \"dim_mult\" must be a list");
    config.dimMult.clear();
    for (const Json& v : m) {
      if (!v.is_number_integer()) throw std::invalid_argument("VAE config: \"dim_mult\" entries must be integers");
      config.dimMult.push_back(v.get<std::int64_t>());
    }
  }
  if (json.contains("temperal_downsample")) {
    const Json& t = json["temperal_downsample"];
    if (!t.is_array()) throw std::invalid_argument("VAE config: \"temperal_downsample\" must be a list");
    config.temporalDownsample.clear();
    for (const Json& v : t) {
      if (!v.is_boolean()) throw std::invalid_argument("VAE config: \"temperal_downsample\" entries must be booleans");
      config.temporalDownsample.push_back(v.get<bool>());
    }
  }
  if (json.contains("attn_scales") && !(json["attn_scales"].is_array() && json["attn_scales"].empty()))
    throw std::invalid_argument("VAE config: only attn_scales [] is supported (as in every Wan 2.1 VAE)");
  if (json.contains("dropout") && !(json["dropout"].is_number() && json["dropout"].get<double>() == 0.0))
    throw std::invalid_argument("VAE config: only dropout 0 is supported (inference)");
  config.check();
  return config;
}

WanVaeConfig WanVaeConfig::preset(std::string_view name) {
  WanVaeConfig config;
  if (name == "wan21" || name == "wan2.1") return config;
  if (name == "tiny") {
    config.dim = 8;
    return config;
  }
  if (name == "wan22" || name == "wan2.2" || name == "tiny22") {
    config.generation = 22;
    config.zDim = 48;
    config.dim = name == "tiny22" ? 4 : 160;
    config.decDim = name == "tiny22" ? 8 : 256;
    return config;
  }
  throw std::invalid_argument("unknown VAE preset \"" + std::string(name) + "\" (tiny, wan21, tiny22, wan22)");
}

std::vector<WanVaeBlock> wanVaeEncoderBlocks(const WanVaeConfig& c) {
  if (c.generation == 22) return wan22VaeEncoderBlocks(c);
  std::vector<WanVaeBlock> blocks;
  const auto dims = encoderDims(c);
  std::int64_t n = 0;
  std::int64_t out = dims[0];
  for (std::int64_t i = 0; i < c.stages(); ++i) {
    std::int64_t in = dims[static_cast<std::size_t>(i)];
    out = dims[static_cast<std::size_t>(i + 1)];
    for (std::int64_t r = 0; r < c.numResBlocks; ++r, in = out)
      blocks.push_back({Kind::Residual, "encoder.downsamples." + str(n++) + ".", in, out});
    if (i != c.stages() - 1)
      blocks.push_back({c.temporalDownsample[static_cast<std::size_t>(i)] ? Kind::Downsample3d : Kind::Downsample2d,
                        "encoder.downsamples." + str(n++) + ".", out, out});
  }
  blocks.push_back({Kind::Residual, "encoder.middle.0.", out, out});
  blocks.push_back({Kind::Attention, "encoder.middle.1.", out, out});
  blocks.push_back({Kind::Residual, "encoder.middle.2.", out, out});
  return blocks;
}

std::vector<WanVaeBlock> wanVaeDecoderBlocks(const WanVaeConfig& c) {
  if (c.generation == 22) return wan22VaeDecoderBlocks(c);
  std::vector<WanVaeBlock> blocks;
  const auto dims = decoderDims(c);
  blocks.push_back({Kind::Residual, "decoder.middle.0.", dims[0], dims[0]});
  blocks.push_back({Kind::Attention, "decoder.middle.1.", dims[0], dims[0]});
  blocks.push_back({Kind::Residual, "decoder.middle.2.", dims[0], dims[0]});
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < c.stages(); ++i) {
    std::int64_t in = dims[static_cast<std::size_t>(i)];
    const std::int64_t out = dims[static_cast<std::size_t>(i + 1)];
    if (i > 0) in /= 2;  // the previous stage's resample halved the channels
    for (std::int64_t r = 0; r <= c.numResBlocks; ++r, in = out)
      blocks.push_back({Kind::Residual, "decoder.upsamples." + str(n++) + ".", in, out});
    if (i != c.stages() - 1) {
      const bool temporal = c.temporalDownsample[static_cast<std::size_t>(c.stages() - 2 - i)];
      blocks.push_back(
          {temporal ? Kind::Upsample3d : Kind::Upsample2d, "decoder.upsamples." + str(n++) + ".", out, out / 2});
    }
  }
  return blocks;
}

std::vector<WanVaeParamSpec> wanVaeParameterSpecs(const WanVaeConfig& c) {
  std::vector<WanVaeParamSpec> specs;
  auto conv = [&](const std::string& name, std::vector<std::int64_t> shape) {
    specs.push_back({name + ".weight", shape});
    specs.push_back({name + ".bias", {shape[0]}});
  };
  auto blockSpecs = [&](const WanVaeBlock& b) {
    const std::string& p = b.prefix;
    switch (b.kind) {
      case Kind::Residual:
        specs.push_back({p + "residual.0.gamma", {b.in, 1, 1, 1}});
        conv(p + "residual.2", {b.out, b.in, 3, 3, 3});
        specs.push_back({p + "residual.3.gamma", {b.out, 1, 1, 1}});
        conv(p + "residual.6", {b.out, b.out, 3, 3, 3});
        if (b.in != b.out) conv(p + "shortcut", {b.out, b.in, 1, 1, 1});
        break;
      case Kind::Attention:
        specs.push_back({p + "norm.gamma", {b.in, 1, 1}});
        conv(p + "to_qkv", {3 * b.in, b.in, 1, 1});
        conv(p + "proj", {b.in, b.in, 1, 1});
        break;
      case Kind::Upsample2d:
      case Kind::Upsample3d:
        conv(p + "resample.1", {b.out, b.in, 3, 3});
        if (b.kind == Kind::Upsample3d) conv(p + "time_conv", {2 * b.in, b.in, 3, 1, 1});
        break;
      case Kind::Downsample2d:
      case Kind::Downsample3d:
        conv(p + "resample.1", {b.out, b.in, 3, 3});
        if (b.kind == Kind::Downsample3d) conv(p + "time_conv", {b.in, b.in, 3, 1, 1});
        break;
      case Kind::StageInput:
      case Kind::AvgDownShortcut:
      case Kind::DupUpShortcut:
        break;
    }
  };
  const auto enc = wanVaeEncoderBlocks(c);
  conv("encoder.conv1", {c.dim, c.pixelChannels(), 3, 3, 3});
  for (const WanVaeBlock& b : enc) blockSpecs(b);
  const std::int64_t encOut = enc.back().out;
  specs.push_back({"encoder.head.0.gamma", {encOut, 1, 1, 1}});
  conv("encoder.head.2", {2 * c.zDim, encOut, 3, 3, 3});
  conv("conv1", {2 * c.zDim, 2 * c.zDim, 1, 1, 1});
  conv("conv2", {c.zDim, c.zDim, 1, 1, 1});
  const auto dec = wanVaeDecoderBlocks(c);
  conv("decoder.conv1", {dec.front().in, c.zDim, 3, 3, 3});
  for (const WanVaeBlock& b : dec) blockSpecs(b);
  const std::int64_t decOut = dec.back().out;
  specs.push_back({"decoder.head.0.gamma", {decOut, 1, 1, 1}});
  conv("decoder.head.2", {c.pixelChannels(), decOut, 3, 3, 3});
  return specs;
}

WanVaeDetection detectWanVaeConfig(const io::WeightSet& weights) {
  WanVaeDetection d;
  auto shapeOf = [&](const std::string& name) -> const std::vector<std::uint64_t>* {
    const io::WeightInfo* info = weights.find(name);
    return info ? &info->shape : nullptr;
  };
  const auto* encConv = shapeOf("encoder.conv1.weight");
  const auto* conv2 = shapeOf("conv2.weight");
  d.isWanVae = shapeOf("decoder.middle.0.residual.0.gamma") != nullptr && encConv != nullptr && conv2 != nullptr;
  if (!d.isWanVae) {
    d.problems.push_back("not a Wan VAE (no encoder.conv1 / conv2 / decoder.middle.0.residual.0.gamma)");
    return d;
  }
  const auto& meta = weights.metadata();
  const auto config = meta.find("config");
  bool fromMetadata = false;
  if (config != meta.end()) {
    try {
      d.config = WanVaeConfig::fromJson(config->second);
      fromMetadata = true;
      d.configSource = "metadata";
    } catch (const std::invalid_argument&) {
      // Not a VAE config (or not ours): fall back to the shapes.
    }
  }
  if (!fromMetadata && encConv->size() == 5 && (*encConv)[1] == 12) {
    d.configSource = "tensor shapes";
    d.config = wan22VaeConfigFromShapes(weights, d.problems);
    if (!d.problems.empty()) return d;
  } else if (!fromMetadata) {
    d.configSource = "tensor shapes";
    WanVaeConfig& c = d.config;
    if (encConv->size() != 5 || conv2->size() != 5) {
      d.problems.push_back("encoder.conv1.weight / conv2.weight are not 5-D convolutions");
      return d;
    }
    c.dim = static_cast<std::int64_t>((*encConv)[0]);
    c.zDim = static_cast<std::int64_t>((*conv2)[0]);
    c.dimMult.clear();
    c.temporalDownsample.clear();
    std::int64_t resInStage = 0, firstStageRes = -1, lastOut = c.dim;
    for (std::int64_t n = 0;; ++n) {
      const std::string p = "encoder.downsamples." + str(n) + ".";
      if (const auto* res = shapeOf(p + "residual.2.weight")) {
        lastOut = static_cast<std::int64_t>((*res)[0]);
        ++resInStage;
      } else if (shapeOf(p + "resample.1.weight")) {
        if (firstStageRes < 0) firstStageRes = resInStage;
        c.dimMult.push_back(c.dim > 0 ? lastOut / c.dim : 0);
        c.temporalDownsample.push_back(shapeOf(p + "time_conv.weight") != nullptr);
        resInStage = 0;
      } else {
        break;
      }
    }
    c.dimMult.push_back(c.dim > 0 ? lastOut / c.dim : 0);
    c.numResBlocks = firstStageRes < 0 ? resInStage : firstStageRes;
  }
  try {
    d.config.check();
  } catch (const std::invalid_argument& error) {
    d.problems.push_back(error.what());
    return d;
  }
  std::set<std::string> expected;
  for (const WanVaeParamSpec& spec : wanVaeParameterSpecs(d.config)) {
    expected.insert(spec.name);
    const auto* shape = shapeOf(spec.name);
    const std::vector<std::uint64_t> want(spec.shape.begin(), spec.shape.end());
    if (!shape)
      d.problems.push_back("tensor \"" + spec.name + "\" is missing");
    else if (*shape != want)
      d.problems.push_back("tensor \"" + spec.name + "\" has shape " + io::formatShape(*shape) + " but the config (" +
                           d.configSource + ") needs " + io::formatShape(want));
    if (d.problems.size() >= 4) break;
  }
  for (const io::WeightInfo& info : weights.weights())
    if (d.problems.size() < 4 && !expected.contains(info.name))
      d.problems.push_back("unexpected tensor \"" + info.name + "\"");
  return d;
}

}  // namespace shotchain::models
