#pragma once

#include <cstdint>
#include <memory>

#include <c10/core/ScalarType.h>

#include "models/model_memory.h"
#include "models/wan/wan_config.h"
#include "models/wan/wan_vae_config.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// The Wan family's memory models (for the planner and the tests that calibrate them).
std::shared_ptr<const DitMemoryModel> wanDitMemory(const WanConfig& config, c10::ScalarType loadDtype = c10::kBFloat16);
// The same with every matmul weight of the blocks and the text embedding stored as scaled fp8 (ComfyUI's
// *_fp8_scaled Wan files), for plans of a published size.
std::shared_ptr<const DitMemoryModel> wanDitMemoryFloat8(const WanConfig& config);
// The same for a file: its fp8-stored matmul weights counted for keptAsStoredSaving.
std::shared_ptr<const DitMemoryModel> wanDitMemory(const io::WeightSet& weights);
std::shared_ptr<const VaeMemoryModel> wanVaeMemory(const WanVaeConfig& config);

// Bytes of the DiT's weights at their load dtype (matmul weights at `dtype`, the rest float32).
std::uint64_t wanDitWeightBytes(const WanConfig& config, c10::ScalarType dtype);
// Bytes of the VAE's weights (all at `dtype`).
std::uint64_t wanVaeWeightBytes(const WanVaeConfig& config, c10::ScalarType dtype);
// Peak bytes of live tensors during one DiT forward of `batch` samples of `tokens` tokens each,
// beyond the weights. Calibrated against the counting CPU allocator (tests/memory).
std::uint64_t estimateWanDitActivations(const WanConfig& config, c10::ScalarType dtype, std::int64_t batch,
                                        std::int64_t tokens);

}  // namespace shotchain::models
