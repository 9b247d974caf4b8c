#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "models/video_diffusion_model.h"
#include "sequence/sequence.h"

namespace shotchain {

class MemoryProbe;

struct ExpertResidencyStats {
  int swaps = 0;                  // changes of the expert on the device
  std::uint64_t bytesToHost = 0;  // swap: an expert parked
  std::uint64_t bytesToDevice = 0;
  std::uint64_t bytesRead = 0;    // reload: experts read from their files
  double seconds = 0;             // spent moving or loading
};

// Keeps the two experts of a pair (docs/wan22.md §8) where the plan says, on the render thread:
//   resident: both on the device for the whole render; nothing moves.
//   swap: one on the device at a time, the other parked in host memory (one buffer per expert, page-locked on
//         CUDA, allocated once); use(e) parks the one in use and brings the other back, copying both.
//   reload: the expert not in use is freed; use(e) reads the other from its file.
// The low-noise expert lives in the slot the ResidencyManager keeps the DiT in, and is on the device again
// after every shot's sampling (endShot), so that policy applies to it unchanged. Every byte between host and
// device is also recorded in probe.recordTransfer.
class ExpertResidencyManager {
 public:
  using Loader = std::function<std::unique_ptr<models::VideoDiffusionModel>(c10::Device)>;

  // Puts the high-noise expert where `mode` wants it before the first shot: loaded (or moved) onto the device,
  // parked in host memory, or freed.
  ExpertResidencyManager(shotchain::ExpertResidency mode, MemoryProbe& probe, std::unique_ptr<models::VideoDiffusionModel>& low,
                  std::unique_ptr<models::VideoDiffusionModel>& high, Loader loadLow, Loader loadHigh, c10::Device device);
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
  struct Parked {
    at::Tensor staging;                    // one host buffer, allocated once
    std::map<std::string, at::Tensor> views;
    bool onHost = false;
  };
  // `counted`: the copy is a move off the device (not the first placement of an expert read into host memory).
  void park(std::unique_ptr<models::VideoDiffusionModel>& slot, Parked& parked, bool counted);
  void unpark(std::unique_ptr<models::VideoDiffusionModel>& slot, Parked& parked);
  void moved(std::uint64_t bytes, bool toDevice);

  shotchain::ExpertResidency mode_;
  MemoryProbe& probe_;
  std::unique_ptr<models::VideoDiffusionModel>& low_;
  std::unique_ptr<models::VideoDiffusionModel>& high_;
  Loader loadLow_, loadHigh_;
  c10::Device device_;
  Parked lowParked_, highParked_;
  int current_ = 0;
  std::uint64_t shotBytes_ = 0;
  double secondsAtShotStart_ = 0;
  ExpertResidencyStats stats_;
};

}  // namespace shotchain
