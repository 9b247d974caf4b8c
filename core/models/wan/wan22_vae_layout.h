#pragma once

// The Wan 2.2 VAE's block order (wan22.md §2), read by wan_vae_config.cpp for configs of generation 22.
#include <string>
#include <vector>

#include "models/wan/wan_vae_config.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// conv1 → stages (StageInput, residual blocks, resample, AvgDownShortcut) → middle (3 blocks).
std::vector<WanVaeBlock> wan22VaeEncoderBlocks(const WanVaeConfig& config);
// conv1 → middle (3 blocks) → stages (StageInput, residual blocks, resample, DupUpShortcut; the last
// stage has neither resample nor shortcut).
std::vector<WanVaeBlock> wan22VaeDecoderBlocks(const WanVaeConfig& config);
// The shortcuts' channel arithmetic must divide evenly; the first inconsistency, or empty.
std::string wan22VaeConfigProblem(const WanVaeConfig& config);
// The config of a Wan 2.2 VAE from its tensor shapes (encoder.conv1 takes 12 channels); problems
// are appended when a shape the detection needs is missing.
WanVaeConfig wan22VaeConfigFromShapes(const io::WeightSet& weights, std::vector<std::string>& problems);

}  // namespace shotchain::models
