#include "models/wan/wan22_vae_layout.h"

#include "io/weight_set.h"

namespace shotchain::models {
using Kind = WanVaeBlock::Kind;
using std::to_string;

const std::array<double, 48> kWan22VaeLatentMean{
    -0.2289, -0.0052, -0.1323, -0.2339, -0.2799, 0.0174,  0.1838,  0.1557,  -0.1382, 0.0542,  0.2813,  0.0891,
    0.1570,  -0.0098, 0.0375,  -0.1825, -0.2246, -0.1207, -0.0698, 0.5109,  0.2665,  -0.2108, -0.2158, 0.2502,
    -0.2055, -0.0322, 0.1109,  0.1567,  -0.0729, 0.0899,  -0.2799, -0.1230, -0.0313, -0.1649, 0.0117,  0.0723,
    -0.2839, -0.2083, -0.0520, 0.3748,  0.0152,  0.1957,  0.1433,  -0.2944, 0.3573,  -0.0548, -0.1681, -0.0667};
const std::array<double, 48> kWan22VaeLatentStd{
    0.4765, 1.0364, 0.4514, 1.1677, 0.5313, 0.4990, 0.4818, 0.5013, 0.8158, 1.0344, 0.5894, 1.0901,
    0.6885, 0.6165, 0.8454, 0.4978, 0.5759, 0.3523, 0.7135, 0.6804, 0.5833, 1.4146, 0.8986, 0.5659,
    0.7069, 0.5338, 0.4889, 0.4917, 0.4069, 0.4999, 0.6866, 0.4093, 0.5709, 0.6065, 0.6415, 0.4944,
    0.5726, 1.2042, 0.5458, 1.6887, 0.3971, 1.0600, 0.3943, 0.5537, 0.5444, 0.4089, 0.7468, 0.7744};

std::vector<WanVaeBlock> wan22VaeEncoderBlocks(const WanVaeConfig& c) {
  std::vector<WanVaeBlock> blocks;
  std::int64_t in = c.dim, out = c.dim;
  for (std::int64_t i = 0; i < c.stages(); ++i) {
    const std::string stage = "encoder.downsamples." + to_string(i) + ".downsamples.";
    const bool down = i != c.stages() - 1;
    const bool temporal = down && c.temporalDownsample[static_cast<std::size_t>(i)];
    out = c.dim * c.dimMult[static_cast<std::size_t>(i)];
    const std::int64_t stageIn = in;
    blocks.push_back({Kind::StageInput, stage, in, in});
    std::int64_t r = 0;
    for (; r < c.numResBlocks; ++r, in = out) blocks.push_back({Kind::Residual, stage + to_string(r) + ".", in, out});
    if (down)
      blocks.push_back({temporal ? Kind::Downsample3d : Kind::Downsample2d, stage + to_string(r) + ".", out, out});
    blocks.push_back({Kind::AvgDownShortcut, stage, stageIn, out, temporal ? 2 : 1, down ? 2 : 1});
  }
  blocks.push_back({Kind::Residual, "encoder.middle.0.", out, out});
  blocks.push_back({Kind::Attention, "encoder.middle.1.", out, out});
  blocks.push_back({Kind::Residual, "encoder.middle.2.", out, out});
  return blocks;
}

std::vector<WanVaeBlock> wan22VaeDecoderBlocks(const WanVaeConfig& c) {
  std::vector<WanVaeBlock> blocks;
  const std::int64_t d = c.decoderDim();
  std::int64_t in = d * c.dimMult.back();
  blocks.push_back({Kind::Residual, "decoder.middle.0.", in, in});
  blocks.push_back({Kind::Attention, "decoder.middle.1.", in, in});
  blocks.push_back({Kind::Residual, "decoder.middle.2.", in, in});
  for (std::int64_t i = 0; i < c.stages(); ++i) {
    const std::string stage = "decoder.upsamples." + to_string(i) + ".upsamples.";
    const bool up = i != c.stages() - 1;
    // The decoder reverses the encoder's list: stage i upsamples in time where encoder stage n−2−i downsampled.
    const bool temporal = up && c.temporalDownsample[static_cast<std::size_t>(c.stages() - 2 - i)];
    const std::int64_t out = d * c.dimMult[static_cast<std::size_t>(c.stages() - 1 - i)];
    const std::int64_t stageIn = in;
    if (up) blocks.push_back({Kind::StageInput, stage, in, in});
    std::int64_t r = 0;
    for (; r <= c.numResBlocks; ++r, in = out) blocks.push_back({Kind::Residual, stage + to_string(r) + ".", in, out});
    if (up) {
      blocks.push_back({temporal ? Kind::Upsample3d : Kind::Upsample2d, stage + to_string(r) + ".", out, out});
      blocks.push_back({Kind::DupUpShortcut, stage, stageIn, out, temporal ? 2 : 1, 2});
    }
  }
  return blocks;
}

std::string wan22VaeConfigProblem(const WanVaeConfig& c) {
  auto check = [](const std::vector<WanVaeBlock>& blocks) -> std::string {
    for (const WanVaeBlock& b : blocks) {
      const std::int64_t factor = b.factorT * b.factorS * b.factorS;
      if (b.kind == Kind::AvgDownShortcut && (b.in * factor) % b.out != 0)
        return "VAE config: " + b.prefix + " averages " + to_string(b.in) + "×" + to_string(factor) + " values into " +
               to_string(b.out) + " channels, which does not divide";
      if (b.kind == Kind::DupUpShortcut && (b.out * factor) % b.in != 0)
        return "VAE config: " + b.prefix + " spreads " + to_string(b.in) + " channels over " + to_string(b.out) + "×" +
               to_string(factor) + " values, which does not divide";
    }
    return {};
  };
  if (std::string problem = check(wan22VaeEncoderBlocks(c)); !problem.empty()) return problem;
  return check(wan22VaeDecoderBlocks(c));
}

WanVaeConfig wan22VaeConfigFromShapes(const io::WeightSet& weights, std::vector<std::string>& problems) {
  WanVaeConfig c;
  c.generation = 22;
  auto dim0 = [&](const std::string& name) -> std::int64_t {
    const io::WeightInfo* info = weights.find(name);
    return info && !info->shape.empty() ? static_cast<std::int64_t>(info->shape[0]) : 0;
  };
  c.dim = dim0("encoder.conv1.weight");
  c.zDim = dim0("conv2.weight");
  const io::WeightInfo* head = weights.find("decoder.head.2.weight");
  c.decDim = head && head->shape.size() == 5 ? static_cast<std::int64_t>(head->shape[1]) : 0;
  if (c.dim <= 0 || c.decDim <= 0) {
    problems.push_back("encoder.conv1.weight / decoder.head.2.weight are missing or not 5-D convolutions");
    return c;
  }
  c.numResBlocks = 0;
  while (weights.find("encoder.downsamples.0.downsamples." + to_string(c.numResBlocks) + ".residual.2.weight"))
    ++c.numResBlocks;
  c.dimMult.clear();
  c.temporalDownsample.clear();
  for (std::int64_t i = 0;; ++i) {
    const std::string stage = "encoder.downsamples." + to_string(i) + ".downsamples.";
    const std::int64_t out = dim0(stage + "0.residual.2.weight");
    if (out == 0) break;
    c.dimMult.push_back(out / c.dim);
    const std::string resample = stage + to_string(c.numResBlocks) + ".";
    if (weights.find(resample + "resample.1.weight"))
      c.temporalDownsample.push_back(weights.find(resample + "time_conv.weight") != nullptr);
  }
  return c;
}

}  // namespace shotchain::models
