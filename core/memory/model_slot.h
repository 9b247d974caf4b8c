#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "models/lora/lora_patcher.h"
#include "models/video_diffusion_model.h"

namespace shotchain::memory {

class TransferQueue;

// One DiT a render uses (the DiT, or a pair's high-noise expert): the only owner of its weights, of where they
// are and of the LoRAs merged into them. The residency policy (ResidencyManager) and a pair's placement
// (ExpertResidencyManager) move it through here alone. A move takes its LoRAs off first, so that parked weights
// are the base and a model off the device holds nothing there; what was asked of them is put back by repatch().
class ModelSlot {
 public:
  using Loader = std::function<std::unique_ptr<models::VideoDiffusionModel>(c10::Device)>;
  enum class Place { Absent, Device, Host };

  // `model`: one already loaded onto `device` (may be null: absent).
  ModelSlot(Loader loader, c10::Device device, std::unique_ptr<models::VideoDiffusionModel> model = nullptr);
  ~ModelSlot();
  ModelSlot(const ModelSlot&) = delete;
  ModelSlot& operator=(const ModelSlot&) = delete;

  Place place() const { return place_; }
  c10::Device device() const { return device_; }
  // The model wherever it is; null when absent.
  models::VideoDiffusionModel* get() const { return model_.get(); }
  // The model on the device; throws std::logic_error when it is not there.
  models::VideoDiffusionModel& onDevice() const;
  std::uint64_t bytes() const;  // of its parameters (0 when absent)

  // Each move returns the bytes it copied or read.
  std::uint64_t load();        // an absent slot: read onto the device through the loader
  std::uint64_t loadParked();  // an absent slot: read into host memory and parked there (the device never holds it)
  std::uint64_t park();        // device → the host staging buffer (allocated once, page-locked on CUDA), synchronous
  std::uint64_t unpark();      // host → device, synchronous
  void release();              // freed wherever it is

  // The way back overlapped with other work (offload's decode): the copies of the leading parameters that fit in
  // `room` bytes started on `queue`; finishReturn starts the rest, waits, and puts them in place.
  std::uint64_t leadingBytesWithin(std::uint64_t room) const;
  std::uint64_t startReturn(TransferQueue& queue, std::uint64_t room = std::numeric_limits<std::uint64_t>::max());
  std::uint64_t finishReturn(TransferQueue& queue);
  // Frees the staging buffer of a slot not parked (the end of a render).
  void dropStaging();
  int stagingAllocations() const { return stagingAllocations_; }
  std::uint64_t stagingBytes() const { return stagingBytes_; }

  // Makes the model carry exactly `stack` (LoraPatcher::apply): now when it is on the device, else when it arrives
  // there (repatch). The figures are those of the change made now.
  models::LoraPatchFigures patch(const std::vector<models::LoraUse>& stack);
  // Puts on what patch() last asked, on a model that arrived on the device (moved back, or read again).
  void repatch();
  // The base weights, and nothing asked.
  void unpatch();
  bool patched() const { return patcher_.patched(); }

 private:
  struct Layout {
    std::string name;
    std::vector<std::int64_t> shape;
    at::ScalarType dtype;
    std::uint64_t offset = 0, bytes = 0;
  };
  void takePatchesOff();
  at::Tensor stagingView(const Layout& part) const;
  void ensureStaging();

  Loader loader_;
  c10::Device device_;
  std::unique_ptr<models::VideoDiffusionModel> model_;
  Place place_ = Place::Absent;
  models::LoraPatcher patcher_;
  std::vector<models::LoraUse> asked_;  // what patch() last asked
  at::Tensor staging_;
  std::vector<Layout> layout_;
  int stagingAllocations_ = 0;
  std::uint64_t stagingBytes_ = 0;
  std::map<std::string, at::Tensor> returning_;  // device tensors the way back is filling
  std::size_t returned_ = 0;                     // parts whose copy has started
};

}  // namespace shotchain::memory
