#pragma once

#include <filesystem>
#include <string>

#include "sequence/sequence.h"

namespace shotchain::cli {

// `bench residency --lora-switch`: the chain rendered pinned with two LoRAs taking turns shot by shot,
// against the same chain under reload (what other tools do to change a LoRA: load the base again).
struct LoraSwitchFigures {
  std::string error;
  int switches = 0;
  double medianPatchSeconds = 0;     // a LoRA switch on the resident DiT
  double medianBytesWritten = 0;     // per switch
  std::uint64_t baseBytesMoved = 0;  // base-weight bytes the pinned run moved between shots
  double reloadSecondsPerShot = 0;   // the base reloaded for every shot
  int loraWeights = 0;               // weights each LoRA patches
};

// Writes the two LoRAs (rank 16 on every 2-D block weight of the DiT) into `work`.
LoraSwitchFigures benchLoraSwitch(const Sequence& sequence, const std::filesystem::path& baseDir,
                                  const std::filesystem::path& work, const std::string& device);

}  // namespace shotchain::cli
