#include "memory/expert_residency.h"

#include <chrono>

#include "memory/memory_probe.h"

namespace shotchain::memory {
namespace {

class MoveTimer {
 public:
  explicit MoveTimer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~MoveTimer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

ExpertResidencyManager::ExpertResidencyManager(shotchain::ExpertResidency mode, MemoryProbe& probe, ModelSlot& low,
                                               ModelSlot& high)
    : mode_(mode == shotchain::ExpertResidency::Auto ? shotchain::ExpertResidency::Resident : mode),
      probe_(probe),
      low_(low),
      high_(high) {
  switch (mode_) {
    case shotchain::ExpertResidency::Resident:
      if (high_.place() == ModelSlot::Place::Absent)
        high_.load();
      else if (high_.place() == ModelSlot::Place::Host)
        high_.unpark();
      break;
    case shotchain::ExpertResidency::Swap:
      // Read straight into host memory: the device never holds both. One kept from an earlier render moves.
      if (high_.place() == ModelSlot::Place::Absent)
        high_.loadParked();
      else if (high_.place() == ModelSlot::Place::Device)
        moved(high_.park(), false);
      break;
    case shotchain::ExpertResidency::Reload:
    case shotchain::ExpertResidency::Auto:
      high_.release();
      break;
  }
}

ExpertResidencyManager::~ExpertResidencyManager() {
  // A parked high-noise expert is let go with its staging (the next render places it again); a parked low-noise
  // one (a render that failed mid-shot) comes back.
  if (high_.place() == ModelSlot::Place::Host) high_.release();
  try {
    if (low_.place() == ModelSlot::Place::Host) low_.unpark();
    low_.dropStaging();
  } catch (...) {
    low_.release();
  }
}

void ExpertResidencyManager::moved(std::uint64_t bytes, bool toDevice) {
  (toDevice ? stats_.bytesToDevice : stats_.bytesToHost) += bytes;
  shotBytes_ += bytes;
  probe_.recordTransfer(bytes);
}

void ExpertResidencyManager::beginShot() {
  shotBytes_ = 0;
  secondsAtShotStart_ = stats_.seconds;
}

void ExpertResidencyManager::use(int expert) {
  if (expert == current_ || mode_ == shotchain::ExpertResidency::Resident) {
    current_ = expert;
    return;
  }
  const MoveTimer timer(stats_.seconds);
  ++stats_.swaps;
  ModelSlot& leaving = current_ == 1 ? high_ : low_;
  ModelSlot& arriving = expert == 1 ? high_ : low_;
  if (mode_ == shotchain::ExpertResidency::Swap) {
    moved(leaving.park(), false);
    moved(arriving.unpark(), true);
  } else {
    leaving.release();
    const std::uint64_t bytes = arriving.load();
    stats_.bytesRead += bytes;
    shotBytes_ += bytes;
    probe_.recordTransfer(bytes);
  }
  arriving.repatch();
  current_ = expert;
}

void ExpertResidencyManager::endShot() { use(0); }

}  // namespace shotchain::memory
