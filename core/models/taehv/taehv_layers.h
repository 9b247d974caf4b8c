#pragma once

#include <cstdint>
#include <string>

namespace shotchain::models::taehv {

// Indices of the layers of taehv.py's base `TAEHV.decoder` (nn.Sequential), which name its tensors
// ("decoder.<index>.…"): 0 Clamp, 1 conv, 2 act, then per stage s = 0, 1, 2 three MemBlocks, Upsample, TGrow and a
// conv, then 21 act and 22 the output conv.
constexpr int kFirstConv = 1;
constexpr int kOutputConv = 22;
constexpr int kStages = 3;
constexpr int kMemBlocksPerStage = 3;
constexpr int memBlockLayer(int stage, int block) { return 3 + 6 * stage + block; }
constexpr int tGrowLayer(int stage) { return 7 + 6 * stage; }
constexpr int stageConvLayer(int stage) { return 8 + 6 * stage; }

inline std::string decoderTensor(int layer, const std::string& suffix) {
  return "decoder." + std::to_string(layer) + "." + suffix;
}

}  // namespace shotchain::models::taehv
