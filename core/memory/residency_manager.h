#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory/memory_plan.h"
#include "memory/model_slot.h"
#include "models/video_diffusion_model.h"

namespace shotchain::memory {

class MemoryProbe;
class TransferQueue;

// A reservation over the budget, or a plan that does not fit (refused before any work).
class BudgetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ResidencyStats {
  int loads = 0;  // DiT loads through the loader
  double lastLoadSeconds = 0;
  double loadSeconds = 0;             // all loads
  int offloads = 0;                   // DiT moved to host staging
  int restores = 0;                   // DiT brought back to the device
  double lastOffloadSeconds = 0;      // the device→host copy before the decode
  double lastRestoreWaitSeconds = 0;  // what beforeShot waited for the prefetch (0 when it was done)
  std::uint64_t bytesToHost = 0;
  std::uint64_t bytesToDevice = 0;
  std::uint64_t prefetchedDuringDecode = 0;  // of the last restore, bytes copied while the decode ran
  int stagingAllocations = 0;                // host staging buffers allocated (1 at most: allocated once, reused)
  std::uint64_t stagingBytes = 0;
};

// Keeps the DiT where the plan's policy says, around each shot, and enforces the budget with its
// own accounting (reserve/release by component), so that a budget smaller than the device behaves
// like a smaller device. Every host↔device byte it moves is recorded in probe.recordTransfer.
//
// Per shot, on the render thread:
//   beforeShot(i) → dit() for sampling → beforeDecode(i) → decode → afterShot(i, more)
// pinned: nothing moves. offload: beforeDecode parks the DiT in its slot's host staging (allocated once);
// its way back starts at once for the part that fits beside the decode and after the decode for the rest
// (side stream / worker thread); beforeShot waits for it. reload: beforeDecode frees the DiT; beforeShot loads
// it again through the slot's loader (timed).
class ResidencyManager {
 public:
  // `dit` is the slot the renderer keeps the DiT in (ModelContext::dit); it may already hold the
  // loaded DiT. Throws BudgetError(plan.reason) when !plan.fits, before anything is loaded.
  // Reserves the VAE weights and the ring buffer (resident for the whole render).
  ResidencyManager(const MemoryPlan& plan, MemoryProbe& probe, ModelSlot& dit);
  ~ResidencyManager();
  ResidencyManager(const ResidencyManager&) = delete;
  ResidencyManager& operator=(const ResidencyManager&) = delete;

  ResidencyPolicy policy() const { return policy_; }
  const MemoryPlan& plan() const { return plan_; }

  // Accounting: the sum of reservations must stay within limit − margin. reserve() replaces the
  // component's earlier reservation; over the budget it throws BudgetError naming the component,
  // the total, the limit and the policy that would fit, and reserves nothing.
  void reserve(const std::string& component, std::uint64_t bytes);
  void release(const std::string& component);
  std::uint64_t reserved() const;
  std::uint64_t reserved(const std::string& component) const;
  std::uint64_t available() const;                              // limit − margin − reserved
  std::uint64_t peakReserved() const { return peakReserved_; }  // the largest reserved() so far

  void beforeShot(int shotIndex);
  models::VideoDiffusionModel& dit();  // between beforeShot and beforeDecode (throws otherwise)
  // anotherShotFollows: false for the last shot (offload then starts no prefetch).
  void beforeDecode(int shotIndex, bool anotherShotFollows = true);
  void afterShot(int shotIndex, bool anotherShotFollows);
  // Waits for any prefetch, brings an offloaded DiT back (so the slot holds a usable DiT when the
  // policy keeps one) and frees the staging buffer; reload leaves the slot empty.
  void finish();

  bool ditResident() const { return dit_.place() == ModelSlot::Place::Device; }
  const ResidencyStats& stats() const { return stats_; }

 private:
  void loadDit();
  void offloadDit();
  void startReturn(std::uint64_t room);
  void completeRestore();
  std::string overBudgetMessage(const std::string& component, std::uint64_t bytes, std::uint64_t total) const;

  MemoryPlan plan_;
  MemoryProbe& probe_;
  ResidencyPolicy policy_;
  std::uint64_t budget_ = 0;  // limit − margin
  std::map<std::string, std::uint64_t> reservations_;
  std::uint64_t peakReserved_ = 0;

  ModelSlot& dit_;
  bool sampling_ = false;
  std::unique_ptr<TransferQueue> queue_;
  ResidencyStats stats_;
};

}  // namespace shotchain::memory
