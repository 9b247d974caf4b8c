#pragma once

#include <cstdint>

#include "memory/model_slot.h"
#include "sequence/sequence.h"

namespace shotchain::memory {

class MemoryProbe;

struct ExpertResidencyStats {
  int swaps = 0;                  // changes of the expert on the device
  std::uint64_t bytesToHost = 0;  // swap: an expert parked
  std::uint64_t bytesToDevice = 0;
  std::uint64_t bytesRead = 0;  // reload: experts read from their files
  double seconds = 0;           // spent moving or loading
};

// Keeps the two experts of a pair (docs/wan22.md §8) where the plan says, on the render thread:
//   resident: both on the device for the whole render; nothing moves.
//   swap: one on the device at a time, the other parked in its slot's host staging (page-locked on CUDA,
//         allocated once); use(e) parks the one in use and brings the other back, copying both.
//   reload: the expert not in use is freed; use(e) reads the other from its file.
// The low-noise expert is the DiT's slot, the one the ResidencyManager moves, and is on the device again after
// every shot's sampling (endShot), so that policy applies to it unchanged. An expert back on the device gets its
// LoRAs again (ModelSlot::repatch). Every byte between host and device is also recorded in probe.recordTransfer.
class ExpertResidencyManager {
 public:
  // Puts the high-noise expert where `mode` wants it before the first shot: loaded (or moved) onto the device,
  // parked in host memory, or freed.
  ExpertResidencyManager(shotchain::ExpertResidency mode, MemoryProbe& probe, ModelSlot& low, ModelSlot& high);
  ~ExpertResidencyManager();
  ExpertResidencyManager(const ExpertResidencyManager&) = delete;
  ExpertResidencyManager& operator=(const ExpertResidencyManager&) = delete;

  shotchain::ExpertResidency mode() const { return mode_; }
  void beginShot();
  // Makes `expert` (1: high noise, 0: low noise) the one on the device.
  void use(int expert);
  // The low-noise expert on the device again.
  void endShot();
  // Bytes moved or read since beginShot.
  std::uint64_t shotBytes() const { return shotBytes_; }
  double shotSeconds() const { return stats_.seconds - secondsAtShotStart_; }
  const ExpertResidencyStats& stats() const { return stats_; }

 private:
  void moved(std::uint64_t bytes, bool toDevice);

  shotchain::ExpertResidency mode_;
  MemoryProbe& probe_;
  ModelSlot& low_;
  ModelSlot& high_;
  int current_ = 0;
  std::uint64_t shotBytes_ = 0;
  double secondsAtShotStart_ = 0;
  ExpertResidencyStats stats_;
};

}  // namespace shotchain::memory
