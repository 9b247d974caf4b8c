#include "continuity/latent_ring_buffer.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/strict_json.h"

namespace shotchain::continuity {

namespace {

constexpr const char* kFormat = "shotchain-latent-ring-v1";

// A view sharing the tensor's storage (a new TensorImpl, no data touched).
at::Tensor viewOf(const at::Tensor& t) { return t.as_strided(t.sizes(), t.strides(), t.storage_offset()); }

std::uint64_t storageBytes(const at::Tensor& t) { return static_cast<std::uint64_t>(t.storage().nbytes()); }

}  // namespace

LatentRingBuffer::LatentRingBuffer(RingBufferLimits limits) : limits_(limits) {
  if (limits_.maxEntries == 0) throw std::invalid_argument("ring buffer capacity must be at least one entry");
}

std::vector<std::string> LatentRingBuffer::put(const std::string& tag, const at::Tensor& latent,
                                               std::map<std::string, std::string> metadata) {
  if (tag.empty()) throw std::invalid_argument("ring buffer tags must not be empty");
  if (!latent.defined()) throw std::invalid_argument("ring buffer entry \"" + tag + "\" has no tensor");
  const std::uint64_t bytes = storageBytes(latent);
  if (bytes > limits_.maxBytes)
    throw std::length_error("ring buffer entry \"" + tag + "\" holds " + std::to_string(bytes) +
                            " bytes, more than the buffer's limit of " + std::to_string(limits_.maxBytes));
  std::vector<std::string> evicted;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = index_.find(tag); it != index_.end()) {
    bytes_ -= it->second->bytes;
    entries_.erase(it->second);
    index_.erase(it);
  }
  entries_.push_back(Entry{tag, latent, bytes, nextSequence_++, std::move(metadata)});
  index_[tag] = std::prev(entries_.end());
  bytes_ += bytes;
  ++counters_.puts;
  evictLocked(evicted);
  return evicted;
}

void LatentRingBuffer::evictLocked(std::vector<std::string>& evicted) {
  while (!entries_.empty() && (entries_.size() > limits_.maxEntries || bytes_ > limits_.maxBytes)) {
    Entry& oldest = entries_.front();
    evicted.push_back(oldest.tag);
    bytes_ -= oldest.bytes;
    index_.erase(oldest.tag);
    entries_.pop_front();
    ++counters_.evictions;
  }
}

std::optional<at::Tensor> LatentRingBuffer::handoff(const std::string& tag) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(tag);
  if (it == index_.end()) return std::nullopt;
  ++counters_.handoffs;
  return viewOf(it->second->latent);
}

std::optional<at::Tensor> LatentRingBuffer::handoffTail(const std::string& tag, std::int64_t frames) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(tag);
  if (it == index_.end()) return std::nullopt;
  const at::Tensor& latent = it->second->latent;
  if (latent.dim() < 3) throw std::out_of_range("ring buffer entry \"" + tag + "\" has no frame dimension");
  const std::int64_t have = latent.size(-3);
  if (frames < 1 || frames > have)
    throw std::out_of_range("ring buffer entry \"" + tag + "\" has " + std::to_string(have) + " latent frames, " +
                            std::to_string(frames) + " requested");
  ++counters_.handoffs;
  return latent.narrow(-3, have - frames, frames);
}

bool LatentRingBuffer::contains(const std::string& tag) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return index_.count(tag) != 0;
}

RingEntryInfo LatentRingBuffer::infoOf(const Entry& e) const {
  RingEntryInfo info;
  info.tag = e.tag;
  info.shape.assign(e.latent.sizes().begin(), e.latent.sizes().end());
  info.dtype = std::string(c10::toString(e.latent.scalar_type()));
  info.device = e.latent.device().str();
  info.bytes = e.bytes;
  info.sequence = e.sequence;
  info.metadata = e.metadata;
  return info;
}

std::optional<RingEntryInfo> LatentRingBuffer::info(const std::string& tag) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(tag);
  if (it == index_.end()) return std::nullopt;
  return infoOf(*it->second);
}

bool LatentRingBuffer::erase(const std::string& tag) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(tag);
  if (it == index_.end()) return false;
  bytes_ -= it->second->bytes;
  entries_.erase(it->second);
  index_.erase(it);
  return true;
}

void LatentRingBuffer::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  index_.clear();
  bytes_ = 0;
}

std::vector<std::string> LatentRingBuffer::tags() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.tag);
  return out;
}

RingBufferStats LatentRingBuffer::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  RingBufferStats s = counters_;
  s.entries = entries_.size();
  s.bytes = bytes_;
  return s;
}

RingBufferLimits LatentRingBuffer::limits() const { return limits_; }

void LatentRingBuffer::save(const std::filesystem::path& path, const std::vector<std::string>& tags) const {
  io::NamedTensors tensors;
  nlohmann::json list = nlohmann::json::array();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const Entry*> chosen;
    if (tags.empty()) {
      for (const Entry& e : entries_) chosen.push_back(&e);
    } else {
      for (const std::string& tag : tags) {
        const auto it = index_.find(tag);
        if (it == index_.end()) throw std::out_of_range("ring buffer has no entry \"" + tag + "\"");
        chosen.push_back(&*it->second);
      }
    }
    for (const Entry* e : chosen) {
      tensors.emplace_back(e->tag, e->latent);  // the writer copies device tensors to the CPU
      list.push_back({{"tag", e->tag}, {"metadata", e->metadata}});
    }
  }
  io::saveSafetensors(path, tensors, {{"format", kFormat}, {"entries", list.dump()}});
}

std::vector<std::string> LatentRingBuffer::load(const std::filesystem::path& path, const c10::Device& device) {
  const auto file = io::SafetensorsFile::open(path);
  const auto& meta = file->header().metadata;
  const auto format = meta.find("format");
  const auto entries = meta.find("entries");
  if (format == meta.end() || format->second != kFormat || entries == meta.end())
    throw std::runtime_error(file->label() + ": not a ShotChain latent ring file (format " + kFormat + ")");
  nlohmann::json list;
  try {
    list = io::parseJsonChecked<nlohmann::json>(entries->second, io::kMaxJsonDepth);
  } catch (const io::JsonRefused& error) {
    throw std::runtime_error(file->label() + ": bad entries list: " + error.what());
  }
  if (!list.is_array()) throw std::runtime_error(file->label() + ": entries must be a list");
  std::vector<std::string> loaded;
  for (const auto& item : list) {
    if (!item.is_object() || !item.contains("tag") || !item["tag"].is_string())
      throw std::runtime_error(file->label() + ": an entry has no tag");
    const std::string tag = item["tag"].get<std::string>();
    if (file->find(tag) == nullptr) throw std::runtime_error(file->label() + ": no tensor for entry \"" + tag + "\"");
    std::map<std::string, std::string> metadata;
    if (item.contains("metadata") && item["metadata"].is_object()) {
      for (const auto& [key, value] : item["metadata"].items()) {
        if (value.is_string()) metadata[key] = value.get<std::string>();
      }
    }
    // Own the data (the file's tensors are views of its mapping), then place it on the device.
    at::Tensor latent = file->tensor(tag).clone();
    if (!device.is_cpu()) latent = latent.to(device);
    put(tag, latent, std::move(metadata));
    loaded.push_back(tag);
  }
  return loaded;
}

}  // namespace shotchain::continuity
