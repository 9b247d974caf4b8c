#include "memory/residency_manager.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include <ATen/ATen.h>

#include "memory/device_transfer.h"
#include "memory/memory_probe.h"
#include "util/byte_size.h"

namespace shotchain {
namespace {

constexpr std::uint64_t kStagingAlignment = 64;
const std::string kDitWeights = "dit weights";
const std::string kDitPrefetch = "dit weights (prefetch)";
const std::string kDitActivations = "dit activations";
const std::string kVaeDecode = "vae decode";

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::uint64_t tensorBytes(const at::Tensor& t) { return static_cast<std::uint64_t>(t.numel()) * t.element_size(); }

std::string policyThatFits(const MemoryPlan& plan) {
  auto fits = [&](std::uint64_t peak) { return peak + plan.margin <= plan.limit; };
  if (fits(plan.peakPinned)) return "pinned would fit (" + formatByteSize(plan.peakPinned) + ")";
  if (plan.tile > 0 && fits(plan.peakPinnedTiled)) return "pinned with a tiled decode would fit";
  if (fits(plan.peakOffload)) return "offload would fit (" + formatByteSize(plan.peakOffload) + ")";
  return "no policy fits this budget";
}

}  // namespace

ResidencyManager::ResidencyManager(const MemoryPlan& plan, MemoryProbe& probe, std::unique_ptr<models::VideoDiffusionModel>& dit,
                                   DitLoader loader, std::string device)
    : plan_(plan),
      probe_(probe),
      loader_(std::move(loader)),
      device_(std::move(device)),
      policy_(plan.chosen == ResidencyPolicy::Auto ? ResidencyPolicy::Pinned : plan.chosen),
      budget_(plan.limit > plan.margin ? plan.limit - plan.margin : 0),
      dit_(dit) {
  if (!plan.fits) throw BudgetError("memory plan refused before any work: " + plan.reason);
  if (!loader_) throw std::invalid_argument("ResidencyManager: no DiT loader");
  if (policy_ == ResidencyPolicy::Offload) queue_ = makeTransferQueue(device_);
  reserve("vae weights", plan.vaeWeights);
  reserve("ring buffer", plan.ringBufferBytes);
  if (dit_) reserve(kDitWeights, plan.ditWeights);
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
  return "memory budget: " + component + " (" + formatByteSize(bytes) + ") would bring the reserved total to " +
         formatByteSize(total) + ", over the " + formatByteSize(plan_.limit) + (plan_.budget ? " budget" : " device") +
         " less its " + formatByteSize(plan_.margin) + " margin under " + toString(policy_) + "; " + policyThatFits(plan_);
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

bool ResidencyManager::ditResident() const { return dit_ != nullptr && !onHost_; }

models::VideoDiffusionModel& ResidencyManager::dit() {
  if (!sampling_ || !ditResident()) throw std::logic_error("ResidencyManager::dit() outside beforeShot … beforeDecode");
  return *dit_;
}

void ResidencyManager::loadDit() {
  reserve(kDitWeights, plan_.ditWeights);
  const auto start = std::chrono::steady_clock::now();
  dit_ = loader_();
  if (!dit_) throw std::logic_error("ResidencyManager: the DiT loader returned nothing");
  stats_.lastLoadSeconds = seconds(start);
  stats_.loadSeconds += stats_.lastLoadSeconds;
  ++stats_.loads;
  // Weights read from disk reach the device through host memory.
  std::uint64_t bytes = 0;
  for (const auto& [name, t] : dit_->namedParameters()) bytes += tensorBytes(t);
  stats_.bytesToDevice += bytes;
  probe_.recordTransfer(bytes);
}

void ResidencyManager::beforeShot(int) {
  if (!dit_) {
    loadDit();
  } else if (onHost_) {
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
    dit_.reset();
    release(kDitWeights);
  } else if (policy_ == ResidencyPolicy::Offload) {
    offloadDit();
    release(kDitWeights);
  }
  reserve(kVaeDecode, plan_.tiledDecode ? plan_.vaeDecodeTiled : plan_.vaeDecodeFull);
  if (policy_ == ResidencyPolicy::Offload && anotherShotFollows) {
    // Bring back, overlapped with the decode, the leading part of the DiT that fits beside it.
    std::uint64_t room = available(), take = 0;
    std::size_t count = 0;
    while (count < slots_.size() && take + slots_[count].bytes <= room) take += slots_[count++].bytes;
    if (count > 0) {
      reserve(kDitPrefetch, take);
      startPrefetch(count);
    }
    stats_.prefetchedDuringDecode = take;
  }
}

void ResidencyManager::afterShot(int, bool anotherShotFollows) {
  release(kVaeDecode);
  if (policy_ == ResidencyPolicy::Offload && onHost_ && anotherShotFollows) {
    reserve(kDitPrefetch, plan_.ditWeights);
    startPrefetch(slots_.size());
  }
}

void ResidencyManager::offloadDit() {
  const auto start = std::chrono::steady_clock::now();
  const auto params = dit_->namedParameters();
  if (!staging_.defined()) {
    std::uint64_t offset = 0;
    for (const auto& [name, t] : params) {
      const std::uint64_t bytes = tensorBytes(t);
      slots_.push_back({name, t.sizes().vec(), t.scalar_type(), offset, bytes});
      offset += (bytes + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
    }
    staging_ = allocateHostStaging(offset, device_);
    ++stats_.stagingAllocations;
    stats_.stagingBytes = offset;
  }
  std::map<std::string, at::Tensor> views;
  std::uint64_t moved = 0;
  std::uint8_t* base = staging_.data_ptr<std::uint8_t>();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    if (params.at(i).first != slot.name) throw std::logic_error("ResidencyManager: the DiT's parameters changed");
    at::Tensor view = at::from_blob(base + slot.offset, slot.shape, at::TensorOptions().dtype(slot.dtype).device(staging_.device()));
    view.copy_(params[i].second);  // device → host, synchronous: the device copy is freed next
    moved += slot.bytes;
    views.emplace(slot.name, std::move(view));
  }
  dit_->replaceParameters([&](const std::string& name, const at::Tensor&) { return views.at(name); });
  onHost_ = true;
  prefetched_ = 0;
  ++stats_.offloads;
  stats_.bytesToHost += moved;
  stats_.lastOffloadSeconds = seconds(start);
  probe_.recordTransfer(moved);
}

void ResidencyManager::startPrefetch(std::size_t count) {
  const at::Device device = torchDevice(device_);
  std::vector<std::pair<at::Tensor, at::Tensor>> copies;
  std::uint64_t moved = 0;
  std::uint8_t* base = staging_.data_ptr<std::uint8_t>();
  for (; prefetched_ < count; ++prefetched_) {
    const Slot& slot = slots_[prefetched_];
    at::Tensor dst = at::empty(slot.shape, at::TensorOptions().dtype(slot.dtype).device(device));
    at::Tensor src = at::from_blob(base + slot.offset, slot.shape, at::TensorOptions().dtype(slot.dtype).device(staging_.device()));
    restored_[slot.name] = dst;
    copies.emplace_back(std::move(dst), std::move(src));
    moved += slot.bytes;
  }
  if (copies.empty()) return;
  queue_->copyAsync(std::move(copies));
  stats_.bytesToDevice += moved;
  probe_.recordTransfer(moved);
}

void ResidencyManager::completeRestore() {
  const auto start = std::chrono::steady_clock::now();
  startPrefetch(slots_.size());
  queue_->wait();
  release(kDitPrefetch);
  dit_->replaceParameters([&](const std::string& name, const at::Tensor&) { return restored_.at(name); });
  restored_.clear();
  prefetched_ = 0;
  onHost_ = false;
  ++stats_.restores;
  stats_.lastRestoreWaitSeconds = seconds(start);
}

void ResidencyManager::finish() {
  sampling_ = false;
  if (dit_ && onHost_) completeRestore();
  if (queue_) queue_->wait();
  restored_.clear();
  staging_ = at::Tensor();
  slots_.clear();
  prefetched_ = 0;
  for (const std::string& name : {kDitPrefetch, kDitActivations, kVaeDecode}) release(name);
  if (!dit_) release(kDitWeights);
}

}  // namespace shotchain
