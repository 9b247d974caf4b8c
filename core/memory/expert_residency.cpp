#include "memory/expert_residency.h"

#include <chrono>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

#include "memory/device_transfer.h"
#include "memory/memory_probe.h"

namespace shotchain {
namespace {

constexpr std::uint64_t kParkedAlignment = 64;

std::uint64_t parameterBytes(const at::Tensor& t) { return static_cast<std::uint64_t>(t.numel()) * t.element_size(); }

std::uint64_t expertBytes(const models::VideoDiffusionModel& model) {
  std::uint64_t bytes = 0;
  for (const auto& [name, t] : model.namedParameters()) bytes += parameterBytes(t);
  return bytes;
}

class MoveTimer {
 public:
  explicit MoveTimer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~MoveTimer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

ExpertResidencyManager::ExpertResidencyManager(shotchain::ExpertResidency mode, MemoryProbe& probe, std::unique_ptr<models::VideoDiffusionModel>& low,
                                 std::unique_ptr<models::VideoDiffusionModel>& high, Loader loadLow, Loader loadHigh,
                                 c10::Device device)
    : mode_(mode == shotchain::ExpertResidency::Auto ? shotchain::ExpertResidency::Resident : mode),
      probe_(probe),
      low_(low),
      high_(high),
      loadLow_(std::move(loadLow)),
      loadHigh_(std::move(loadHigh)),
      device_(device) {
  if (!loadLow_ || !loadHigh_) throw std::invalid_argument("ExpertResidencyManager: an expert loader is missing");
  switch (mode_) {
    case shotchain::ExpertResidency::Resident:
      if (!high_) high_ = loadHigh_(device_);
      else if (high_->device() != device_) high_->replaceParameters([&](const std::string&, const at::Tensor& t) { return t.to(device_); });
      break;
    case shotchain::ExpertResidency::Swap: {
      // Read straight into host memory: the device never holds both. One kept from an earlier render moves.
      const bool kept = high_ != nullptr;
      if (!kept) high_ = loadHigh_(c10::kCPU);
      park(high_, highParked_, kept);
      break;
    }
    case shotchain::ExpertResidency::Reload:
    case shotchain::ExpertResidency::Auto:
      high_.reset();
      break;
  }
}

ExpertResidencyManager::~ExpertResidencyManager() {
  // Parked parameters are views of the staging buffers freed with this object: a parked high-noise expert is
  // let go (the next render places it again), a parked low-noise one (a render that failed mid-shot) comes back.
  if (highParked_.onHost) high_.reset();
  if (lowParked_.onHost && low_) {
    try {
      unpark(low_, lowParked_);
    } catch (...) {
      low_.reset();
    }
  }
}

void ExpertResidencyManager::moved(std::uint64_t bytes, bool toDevice) {
  (toDevice ? stats_.bytesToDevice : stats_.bytesToHost) += bytes;
  shotBytes_ += bytes;
  probe_.recordTransfer(bytes);
}

void ExpertResidencyManager::park(std::unique_ptr<models::VideoDiffusionModel>& slot, Parked& parked, bool counted) {
  const auto params = slot->namedParameters();
  if (!parked.staging.defined()) {
    std::uint64_t size = 0;
    for (const auto& [name, t] : params) size += (parameterBytes(t) + kParkedAlignment - 1) / kParkedAlignment * kParkedAlignment;
    parked.staging = allocateHostStaging(size, device_.str());
    std::uint8_t* base = parked.staging.data_ptr<std::uint8_t>();
    std::uint64_t offset = 0;
    for (const auto& [name, t] : params) {
      parked.views.emplace(name, at::from_blob(base + offset, t.sizes(), at::TensorOptions().dtype(t.scalar_type()).device(parked.staging.device())));
      offset += (parameterBytes(t) + kParkedAlignment - 1) / kParkedAlignment * kParkedAlignment;
    }
  }
  std::uint64_t bytes = 0;
  for (const auto& [name, t] : params) {
    parked.views.at(name).copy_(t);  // synchronous: the device copy is freed next
    bytes += parameterBytes(t);
  }
  slot->replaceParameters([&](const std::string& name, const at::Tensor&) { return parked.views.at(name); });
  parked.onHost = true;
  if (counted) moved(bytes, false);
}

void ExpertResidencyManager::unpark(std::unique_ptr<models::VideoDiffusionModel>& slot, Parked& parked) {
  std::uint64_t bytes = 0;
  slot->replaceParameters([&](const std::string&, const at::Tensor& host) {
    at::Tensor onDevice = at::empty(host.sizes(), host.options().device(device_));
    onDevice.copy_(host);
    bytes += parameterBytes(host);
    return onDevice;
  });
  parked.onHost = false;
  moved(bytes, true);
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
  std::unique_ptr<models::VideoDiffusionModel>& leaving = current_ == 1 ? high_ : low_;
  std::unique_ptr<models::VideoDiffusionModel>& arriving = expert == 1 ? high_ : low_;
  if (mode_ == shotchain::ExpertResidency::Swap) {
    park(leaving, current_ == 1 ? highParked_ : lowParked_, true);
    unpark(arriving, expert == 1 ? highParked_ : lowParked_);
  } else {
    leaving.reset();
    arriving = (expert == 1 ? loadHigh_ : loadLow_)(device_);
    const std::uint64_t bytes = expertBytes(*arriving);
    stats_.bytesRead += bytes;
    shotBytes_ += bytes;
    probe_.recordTransfer(bytes);
  }
  current_ = expert;
}

void ExpertResidencyManager::endShot() { use(0); }

}  // namespace shotchain
