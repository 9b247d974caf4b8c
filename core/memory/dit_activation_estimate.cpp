#include <algorithm>

#include "memory/memory_planner.h"

namespace shotchain {
namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); }

}  // namespace

std::uint64_t wanDitWeightBytes(const models::WanConfig& c, c10::ScalarType dtype) {
  const std::uint64_t d = u(c.dim), f = u(c.ffnDim), s = c10::elementSize(dtype);
  const std::uint64_t headOut = u(c.outDim * c.patchVolume());
  std::uint64_t matmul = d * u(c.inDim * c.patchVolume()) + d;  // patch embedding
  matmul += d * u(c.textDim) + d + d * d + d;                    // text embedding
  matmul += u(c.numLayers) * (8 * (d * d + d) + (d * f + f) + (f * d + d));
  std::uint64_t f32 = d * u(c.freqDim) + d + d * d + d + 6 * d * d + 6 * d;  // time MLP and projection
  f32 += u(c.numLayers) * (6 * d + (c.qkNorm ? 4 * d : 0) + (c.crossAttnNorm ? 2 * d : 0));
  f32 += 2 * d + headOut * d + headOut;
  return matmul * s + f32 * 4;
}

std::uint64_t wanVaeWeightBytes(const models::WanVaeConfig& config, c10::ScalarType dtype) {
  return config.parameterCount() * c10::elementSize(dtype);
}

// What WanModel::forward keeps alive at its peak (wan_model.cpp), per token row of the batch:
//  - for the whole pass: the float64 RoPE cos/sin, the float32 padded context and its embedding;
//  - inside a block, five float32 rows of dim (x, the self/cross attention outputs, the modulated
//    input, ffn.2's output) and then either the FFN's two ffnDim rows at the compute dtype, or the
//    attention's q, k, v, output at the compute dtype plus one block of scores (at most
//    maxBlockBytes = 256 MiB, see attention.h).
// Calibrated against the counting CPU allocator: tests/memory test_memory_plan (±30%; 0.99–1.1 there).
std::uint64_t estimateWanDitActivations(const models::WanConfig& c, c10::ScalarType dtype, std::int64_t batch,
                                        std::int64_t tokens) {
  constexpr std::uint64_t kFloat32Rows = 5;
  const std::uint64_t s = c10::elementSize(dtype), b = u(batch), n = u(tokens), d = u(c.dim), f = u(c.ffnDim);
  const std::uint64_t rows = b * n;
  const std::uint64_t ffnPhase = rows * (kFloat32Rows * 4 * d + 2 * s * d + 2 * s * f);
  const std::uint64_t scores = std::min<std::uint64_t>(b * u(c.numHeads) * n * n * s, 256ull << 20);
  const std::uint64_t attentionPhase = rows * (kFloat32Rows * 4 * d + 4 * s * d) + scores;
  const std::uint64_t wholePass = rows * 8 * u(c.headDim()) + b * u(c.textLen) * (4 * u(c.textDim) + 4 * d + s * d);
  return wholePass + std::max(ffnPhase, attentionPhase);
}

}  // namespace shotchain
