#include "memory/model_slot.h"

#include <stdexcept>

#include <ATen/ATen.h>

#include "memory/device_transfer.h"

namespace shotchain::memory {
namespace {

constexpr std::uint64_t kStagingAlignment = 64;

std::uint64_t tensorBytes(const at::Tensor& t) { return static_cast<std::uint64_t>(t.numel()) * t.element_size(); }

}  // namespace

ModelSlot::ModelSlot(Loader loader, c10::Device device, std::unique_ptr<models::VideoDiffusionModel> model)
    : loader_(std::move(loader)),
      device_(device),
      model_(std::move(model)),
      place_(model_ ? Place::Device : Place::Absent) {
  if (!loader_) throw std::invalid_argument("ModelSlot: no loader");
}

ModelSlot::~ModelSlot() = default;

models::VideoDiffusionModel& ModelSlot::onDevice() const {
  if (place_ != Place::Device) throw std::logic_error("ModelSlot: the model is not on the device");
  return *model_;
}

std::uint64_t ModelSlot::bytes() const {
  std::uint64_t sum = 0;
  if (model_)
    for (const auto& [name, t] : model_->namedParameters()) sum += tensorBytes(t);
  return sum;
}

std::uint64_t ModelSlot::load() {
  if (place_ != Place::Absent) throw std::logic_error("ModelSlot: load over a loaded model");
  model_ = loader_(device_);
  if (!model_) throw std::logic_error("ModelSlot: the loader returned nothing");
  place_ = Place::Device;
  return bytes();
}

std::uint64_t ModelSlot::loadParked() {
  if (place_ != Place::Absent) throw std::logic_error("ModelSlot: load over a loaded model");
  model_ = loader_(c10::kCPU);
  if (!model_) throw std::logic_error("ModelSlot: the loader returned nothing");
  place_ = Place::Device;  // where its tensors are is all park() reads
  return park();
}

void ModelSlot::ensureStaging() {
  if (staging_.defined()) return;
  layout_.clear();
  std::uint64_t offset = 0;
  for (const auto& [name, t] : model_->namedParameters()) {
    const std::uint64_t size = tensorBytes(t);
    layout_.push_back({name, t.sizes().vec(), t.scalar_type(), offset, size});
    offset += (size + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
  }
  staging_ = allocateHostStaging(offset, device_.str());
  ++stagingAllocations_;
  stagingBytes_ = offset;
}

at::Tensor ModelSlot::stagingView(const Layout& part) const {
  return at::from_blob(staging_.data_ptr<std::uint8_t>() + part.offset, part.shape,
                       at::TensorOptions().dtype(part.dtype).device(staging_.device()));
}

void ModelSlot::takePatchesOff() {
  if (patcher_.patched()) patcher_.restore(*model_);
}

std::uint64_t ModelSlot::park() {
  if (place_ != Place::Device) throw std::logic_error("ModelSlot: park of a model not on the device");
  takePatchesOff();
  ensureStaging();
  const auto params = model_->namedParameters();
  if (params.size() != layout_.size()) throw std::logic_error("ModelSlot: the model's parameters changed");
  std::map<std::string, at::Tensor> views;
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < layout_.size(); ++i) {
    if (params[i].first != layout_[i].name) throw std::logic_error("ModelSlot: the model's parameters changed");
    at::Tensor view = stagingView(layout_[i]);
    view.copy_(params[i].second);  // synchronous: the device copy is freed next
    moved += layout_[i].bytes;
    views.emplace(layout_[i].name, std::move(view));
  }
  model_->replaceParameters([&](const std::string& name, const at::Tensor&) { return views.at(name); });
  place_ = Place::Host;
  returned_ = 0;
  returning_.clear();
  return moved;
}

std::uint64_t ModelSlot::unpark() {
  if (place_ != Place::Host) throw std::logic_error("ModelSlot: unpark of a model not parked");
  std::uint64_t moved = 0;
  model_->replaceParameters([&](const std::string&, const at::Tensor& host) {
    at::Tensor onDevice = at::empty(host.sizes(), host.options().device(device_));
    onDevice.copy_(host);
    moved += tensorBytes(host);
    return onDevice;
  });
  place_ = Place::Device;
  returning_.clear();
  returned_ = 0;
  return moved;
}

void ModelSlot::release() {
  model_.reset();
  place_ = Place::Absent;
  patcher_ = models::LoraPatcher();
  returning_.clear();
  returned_ = 0;
  dropStaging();
}

std::uint64_t ModelSlot::leadingBytesWithin(std::uint64_t room) const {
  std::uint64_t take = 0;
  for (std::size_t i = returned_; i < layout_.size() && take + layout_[i].bytes <= room; ++i) take += layout_[i].bytes;
  return take;
}

std::uint64_t ModelSlot::startReturn(TransferQueue& queue, std::uint64_t room) {
  if (place_ != Place::Host) throw std::logic_error("ModelSlot: a way back for a model not parked");
  std::vector<std::pair<at::Tensor, at::Tensor>> copies;
  std::uint64_t moved = 0;
  for (; returned_ < layout_.size() && moved + layout_[returned_].bytes <= room; ++returned_) {
    const Layout& part = layout_[returned_];
    at::Tensor dst = at::empty(part.shape, at::TensorOptions().dtype(part.dtype).device(device_));
    returning_[part.name] = dst;
    copies.emplace_back(std::move(dst), stagingView(part));
    moved += part.bytes;
  }
  if (!copies.empty()) queue.copyAsync(std::move(copies));
  return moved;
}

std::uint64_t ModelSlot::finishReturn(TransferQueue& queue) {
  const std::uint64_t moved = startReturn(queue);
  queue.wait();
  model_->replaceParameters([&](const std::string& name, const at::Tensor&) { return returning_.at(name); });
  returning_.clear();
  returned_ = 0;
  place_ = Place::Device;
  return moved;
}

void ModelSlot::dropStaging() {
  if (place_ == Place::Host) throw std::logic_error("ModelSlot: the staging buffer of a parked model");
  staging_ = at::Tensor();
  layout_.clear();
}

models::LoraPatchFigures ModelSlot::patch(const std::vector<models::LoraUse>& stack) {
  asked_ = stack;
  if (place_ != Place::Device) return {};
  return patcher_.apply(*model_, stack);
}

void ModelSlot::repatch() {
  if (!asked_.empty() || patcher_.patched()) patcher_.apply(onDevice(), asked_);
}

void ModelSlot::unpatch() {
  asked_.clear();
  if (model_ && place_ == Place::Device) takePatchesOff();
}

}  // namespace shotchain::memory
