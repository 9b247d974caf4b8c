#include "memory/residency_manager.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include <ATen/ATen.h>

#include "memory/device_transfer.h"
#include "memory/memory_probe.h"
#include "util/byte_size.h"

namespace shotchain::memory {
namespace {

const std::string kDitWeights = "dit weights";
const std::string kDitPrefetch = "dit weights (prefetch)";
const std::string kDitActivations = "dit activations";
const std::string kVaeDecode = "vae decode";

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string policyThatFits(const MemoryPlan& plan) {
  auto fits = [&](std::uint64_t peak) { return peak + plan.margin <= plan.limit; };
  if (fits(plan.peakPinned)) return "pinned would fit (" + util::formatByteSize(plan.peakPinned) + ")";
  if (plan.tile > 0 && fits(plan.peakPinnedTiled)) return "pinned with a tiled decode would fit";
  if (fits(plan.peakOffload)) return "offload would fit (" + util::formatByteSize(plan.peakOffload) + ")";
  return "no policy fits this budget";
}

}  // namespace

ResidencyManager::ResidencyManager(const MemoryPlan& plan, MemoryProbe& probe, ModelSlot& dit)
    : plan_(plan),
      probe_(probe),
      policy_(plan.chosen == ResidencyPolicy::Auto ? ResidencyPolicy::Pinned : plan.chosen),
      budget_(plan.limit > plan.margin ? plan.limit - plan.margin : 0),
      dit_(dit) {
  if (!plan.fits) throw BudgetError("memory plan refused before any work: " + plan.reason);
  if (policy_ == ResidencyPolicy::Offload) queue_ = makeTransferQueue(dit_.device().str());
  reserve("vae weights", plan.vaeWeights);
  reserve("ring buffer", plan.ringBufferBytes);
  if (dit_.get()) reserve(kDitWeights, plan.ditWeights);
}

ResidencyManager::~ResidencyManager() {
  if (queue_) {
    try {
      queue_->wait();
    } catch (...) {  // a failed copy no longer matters once the manager goes
    }
  }
}

std::string ResidencyManager::overBudgetMessage(const std::string& component, std::uint64_t bytes,
                                                std::uint64_t total) const {
  return "memory budget: " + component + " (" + util::formatByteSize(bytes) + ") would bring the reserved total to " +
         util::formatByteSize(total) + ", over the " + util::formatByteSize(plan_.limit) +
         (plan_.budget ? " budget" : " device") + " less its " + util::formatByteSize(plan_.margin) + " margin under " +
         toString(policy_) + "; " + policyThatFits(plan_);
}

void ResidencyManager::reserve(const std::string& component, std::uint64_t bytes) {
  const std::uint64_t others = reserved() - reserved(component);
  if (others + bytes > budget_) throw BudgetError(overBudgetMessage(component, bytes, others + bytes));
  reservations_[component] = bytes;
  peakReserved_ = std::max(peakReserved_, others + bytes);
}

void ResidencyManager::release(const std::string& component) { reservations_.erase(component); }

std::uint64_t ResidencyManager::reserved() const {
  std::uint64_t sum = 0;
  for (const auto& [name, bytes] : reservations_) sum += bytes;
  return sum;
}

std::uint64_t ResidencyManager::reserved(const std::string& component) const {
  const auto it = reservations_.find(component);
  return it == reservations_.end() ? 0 : it->second;
}

std::uint64_t ResidencyManager::available() const { return budget_ > reserved() ? budget_ - reserved() : 0; }

models::VideoDiffusionModel& ResidencyManager::dit() {
  if (!sampling_ || !ditResident()) throw std::logic_error("ResidencyManager::dit() outside beforeShot … beforeDecode");
  return dit_.onDevice();
}

void ResidencyManager::loadDit() {
  reserve(kDitWeights, plan_.ditWeights);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t bytes = dit_.load();  // weights read from disk reach the device through host memory
  stats_.lastLoadSeconds = seconds(start);
  stats_.loadSeconds += stats_.lastLoadSeconds;
  ++stats_.loads;
  stats_.bytesToDevice += bytes;
  probe_.recordTransfer(bytes);
}

void ResidencyManager::beforeShot(int) {
  if (dit_.place() == ModelSlot::Place::Absent) {
    loadDit();
  } else if (dit_.place() == ModelSlot::Place::Host) {
    completeRestore();
  }
  reserve(kDitWeights, plan_.ditWeights);
  reserve(kDitActivations, plan_.ditActivationPeak);
  sampling_ = true;
}

void ResidencyManager::beforeDecode(int, bool anotherShotFollows) {
  sampling_ = false;
  release(kDitActivations);
  if (policy_ == ResidencyPolicy::Reload) {
    dit_.release();
    release(kDitWeights);
  } else if (policy_ == ResidencyPolicy::Offload) {
    offloadDit();
    release(kDitWeights);
  }
  reserve(kVaeDecode, plan_.tiledDecode ? plan_.vaeDecodeTiled : plan_.vaeDecodeFull);
  if (policy_ == ResidencyPolicy::Offload && anotherShotFollows) {
    // Bring back, overlapped with the decode, the leading part of the DiT that fits beside it.
    const std::uint64_t take = dit_.leadingBytesWithin(available());
    if (take > 0) {
      reserve(kDitPrefetch, take);
      startReturn(take);
    }
    stats_.prefetchedDuringDecode = take;
  }
}

void ResidencyManager::afterShot(int, bool anotherShotFollows) {
  release(kVaeDecode);
  if (policy_ == ResidencyPolicy::Offload && dit_.place() == ModelSlot::Place::Host && anotherShotFollows) {
    reserve(kDitPrefetch, plan_.ditWeights);
    startReturn(std::numeric_limits<std::uint64_t>::max());
  }
}

void ResidencyManager::offloadDit() {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t moved = dit_.park();
  ++stats_.offloads;
  stats_.bytesToHost += moved;
  stats_.stagingAllocations = dit_.stagingAllocations();
  stats_.stagingBytes = dit_.stagingBytes();
  stats_.lastOffloadSeconds = seconds(start);
  probe_.recordTransfer(moved);
}

void ResidencyManager::startReturn(std::uint64_t room) {
  const std::uint64_t moved = dit_.startReturn(*queue_, room);
  stats_.bytesToDevice += moved;
  probe_.recordTransfer(moved);
}

void ResidencyManager::completeRestore() {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t moved = dit_.finishReturn(*queue_);
  stats_.bytesToDevice += moved;
  probe_.recordTransfer(moved);
  release(kDitPrefetch);
  ++stats_.restores;
  stats_.lastRestoreWaitSeconds = seconds(start);
}

void ResidencyManager::finish() {
  sampling_ = false;
  if (dit_.place() == ModelSlot::Place::Host) completeRestore();
  if (queue_) queue_->wait();
  if (dit_.place() != ModelSlot::Place::Host) dit_.dropStaging();
  for (const std::string& name : {kDitPrefetch, kDitActivations, kVaeDecode}) release(name);
  if (!dit_.get()) release(kDitWeights);
}

}  // namespace shotchain::memory
