#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace shotchain::continuity {

struct RingBufferLimits {
  std::size_t maxEntries = 8;
  std::uint64_t maxBytes = std::uint64_t{1} << 30;  // 1 GiB
};

struct RingBufferStats {
  std::size_t entries = 0;
  std::uint64_t bytes = 0;  // storage bytes held by the entries
  std::uint64_t puts = 0;
  std::uint64_t evictions = 0;
  std::uint64_t handoffs = 0;
  std::uint64_t handoffBytesCopied = 0;  // bytes a handoff copied: 0 by construction
};

struct RingEntryInfo {
  std::string tag;
  std::vector<std::int64_t> shape;
  std::string dtype;
  std::string device;
  std::uint64_t bytes = 0;
  std::uint64_t sequence = 0;  // insertion order (larger = newer)
  std::map<std::string, std::string> metadata;
};

// The device-resident latent ring buffer (continuity.md): keyed by tag, bounded by entry count
// and bytes (oldest evicted first), thread-safe. Entries hold a reference to the latent's
// storage (no copy on put), and a handoff returns a view of it (no copy on read). Entries are
// treated as immutable: never write into a tensor after putting it or into a handed-off view.
class LatentRingBuffer {
 public:
  explicit LatentRingBuffer(RingBufferLimits limits = {});

  // Stores `latent` under `tag` (replacing any entry with that tag, which then counts as newest),
  // then evicts the oldest entries until both limits hold. Bytes are the storage bytes the tensor
  // keeps alive. Throws std::length_error when the entry alone exceeds maxBytes (nothing changes),
  // std::invalid_argument for an empty tag or an undefined tensor. Returns the evicted tags.
  std::vector<std::string> put(const std::string& tag, const at::Tensor& latent,
                               std::map<std::string, std::string> metadata = {});

  // A view of the stored latent (same storage, zero bytes copied); nullopt for unknown tags.
  std::optional<at::Tensor> handoff(const std::string& tag);
  // A view of the last `frames` latent frames (dimension −3 of [.., C, F, H, W]): the tail the
  // next shot starts from. Throws std::out_of_range when frames is not in 1..F.
  std::optional<at::Tensor> handoffTail(const std::string& tag, std::int64_t frames);

  bool contains(const std::string& tag) const;
  std::optional<RingEntryInfo> info(const std::string& tag) const;
  bool erase(const std::string& tag);
  void clear();
  std::vector<std::string> tags() const;  // oldest first
  RingBufferStats stats() const;
  RingBufferLimits limits() const;

  // Writes the entries with the given tags (all when empty; oldest first) to one safetensors
  // file: tensor "<tag>" per entry (copied to the CPU for writing), metadata `format` =
  // "shotchain-latent-ring-v1", `entries` = JSON list of {tag, metadata} in order. Atomic.
  // Throws std::out_of_range for an unknown tag.
  void save(const std::filesystem::path& path, const std::vector<std::string>& tags = {}) const;
  // Reads such a file and puts its entries (in their saved order) on `device`. Returns the tags
  // loaded. Throws std::runtime_error (naming the file) for files of another format.
  std::vector<std::string> load(const std::filesystem::path& path, const c10::Device& device = c10::kCPU);

 private:
  struct Entry {
    std::string tag;
    at::Tensor latent;
    std::uint64_t bytes = 0;
    std::uint64_t sequence = 0;
    std::map<std::string, std::string> metadata;
  };
  using List = std::list<Entry>;

  void evictLocked(std::vector<std::string>& evicted);
  RingEntryInfo infoOf(const Entry& entry) const;

  mutable std::mutex mutex_;
  RingBufferLimits limits_;
  List entries_;  // oldest first
  std::map<std::string, List::iterator> index_;
  std::uint64_t bytes_ = 0;
  std::uint64_t nextSequence_ = 0;
  RingBufferStats counters_;
};

}  // namespace shotchain::continuity
