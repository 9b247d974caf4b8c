#include "distributed/process_group.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/c10d_backend.h"

namespace shotchain::distributed {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kHeartbeat = std::chrono::milliseconds(250);

std::vector<std::uint8_t> bytesOf(const std::string& text) { return {text.begin(), text.end()}; }
std::string textOf(const std::vector<std::uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }
std::string heartbeatKey(int rank) { return "shotchain/heartbeat/" + std::to_string(rank); }
std::string failureKey(int rank) { return "shotchain/failed/" + std::to_string(rank); }
const char* const kFailures = "shotchain/failures";  // how many ranks reported a failure

std::string secondsText(std::chrono::nanoseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(duration).count());
  return text;
}

bool isLoopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

// `member`: one of the world's own connections, counted by the rendezvous (rank 0 waits for all of
// them); the heartbeat's and the diagnosis' extra connections are not.
c10::intrusive_ptr<::c10d::TCPStore> connectStore(const Rendezvous& r, bool server, bool member,
                                                  std::chrono::milliseconds timeout) {
  ::c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(r.masterPort);
  options.isServer = server;
  if (member) options.numWorkers = static_cast<std::size_t>(r.worldSize);  // a client counts itself only when set
  options.waitWorkers = member;
  options.timeout = timeout;
  return c10::make_intrusive<::c10d::TCPStore>(r.masterAddress, options);
}

// Gloo moves raw elements and knows no bfloat16 in libtorch 1.13: send such tensors as the
// same-sized half type (nothing is computed on them on the way).
at::Tensor wire(const at::Tensor& t) { return t.scalar_type() == at::kBFloat16 ? t.view(at::kHalf) : t; }

struct Heartbeat {
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
};

}  // namespace

struct DistributedGroup::Impl {
  GroupOptions options;
  int rank = 0, world = 1, sequenceSize = 1, guidanceSize = 1;
  c10::intrusive_ptr<::c10d::Store> store;
  c10::intrusive_ptr<CollectiveBackend> worldGroup, sequenceGroup, guidanceGroup;  // null for a group of one
  std::atomic<std::uint64_t> entered{0};
  std::atomic<bool> peerFailed{false};  // another rank reported a failure (seen by the heartbeat)
  mutable std::mutex statsMutex;
  CollectiveStats stats;
  std::string failure;
  Heartbeat heartbeat;

  int sequenceRank() const { return rank % sequenceSize; }
  int guidanceRank() const { return rank / sequenceSize; }

  void startHeartbeat() {
    c10::intrusive_ptr<::c10d::TCPStore> beats = connectStore(options.rendezvous, false, false, options.timeout);
    heartbeat.thread = std::thread([this, beats] {
      std::uint64_t beat = 0;
      std::unique_lock<std::mutex> lock(heartbeat.mutex);
      while (!heartbeat.stop.load()) {
        try {
          beats->set(heartbeatKey(rank), bytesOf(std::to_string(++beat) + " " + std::to_string(entered.load())));
          if (beats->add(kFailures, 0) > 0) peerFailed.store(true);
        } catch (const std::exception&) {
          // The store went away (rank 0 ended): the collectives say so.
        }
        heartbeat.wake.wait_for(lock, kHeartbeat, [this] { return heartbeat.stop.load(); });
      }
    });
  }

  void stopHeartbeat() {
    heartbeat.stop.store(true);
    heartbeat.wake.notify_all();
    if (heartbeat.thread.joinable()) heartbeat.thread.join();
  }

  // Which rank a failed collective waited for: one that reported a failure, stopped beating (dead or
  // frozen), or has not reached this collective. {message, rank or −1}.
  std::pair<std::string, int> diagnose() const {
    const Rendezvous& r = options.rendezvous;
    const std::pair<std::string, int> storeGone{"rank 0 is gone (its rendezvous store at " + r.masterAddress + ":" +
                                                    std::to_string(r.masterPort) + " does not answer)",
                                                0};
    c10::intrusive_ptr<::c10d::TCPStore> probe;
    try {
      probe = connectStore(r, false, false, std::chrono::seconds(3));
    } catch (const std::exception&) {
      return storeGone;
    }
    auto read = [&] {
      std::map<int, std::pair<std::uint64_t, std::uint64_t>> beats;  // rank → (beat, collectives entered)
      for (int other = 0; other < world; ++other) {
        if (other == rank || !probe->check({heartbeatKey(other)})) continue;
        const std::string text = textOf(probe->get(heartbeatKey(other)));
        const auto space = text.find(' ');
        beats[other] = {std::stoull(text.substr(0, space)), std::stoull(text.substr(space + 1))};
      }
      return beats;
    };
    try {
      for (int other = 0; other < world; ++other)
        if (other != rank && probe->check({failureKey(other)}))
          return {"rank " + std::to_string(other) + " failed: " + textOf(probe->get(failureKey(other))), other};
      const auto before = read();
      std::this_thread::sleep_for(kHeartbeat * 5);
      const auto after = read();
      for (int other = 0; other < world; ++other) {
        if (other == rank) continue;
        const auto b = before.find(other), a = after.find(other);
        if (a == after.end() || (b != before.end() && a->second.first == b->second.first))
          return {"rank " + std::to_string(other) + " stopped responding (no heartbeat for " +
                      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kHeartbeat * 5).count()) +
                      " ms: it died or hangs)",
                  other};
      }
      const std::uint64_t mine = entered.load();
      for (const auto& [other, beat] : after)
        if (beat.second < mine)
          return {"rank " + std::to_string(other) + " has not reached collective #" + std::to_string(mine) +
                      " (it is at #" + std::to_string(beat.second) + ")",
                  other};
    } catch (const std::exception&) {
      return storeGone;
    }
    return {"no other rank is known to have failed", -1};
  }

  // Runs one collective with the timeout; on failure remembers it (later collectives fail at once)
  // and throws DistributedError naming the rank at fault.
  template <typename Start>
  void run(const char* what, std::uint64_t bytesSent, Start start) {
    {
      const std::lock_guard<std::mutex> lock(statsMutex);
      if (!failure.empty()) throw DistributedError(failure, -1);
    }
    const std::uint64_t index = ++entered;
    const auto begin = Clock::now();
    std::string error;
    try {
      auto work = start();
      // In slices, so that a rank that reported a failure ends the wait at once.
      const auto deadline = begin + options.timeout;
      while (true) {
        try {
          work->wait(std::chrono::milliseconds(200));
          break;
        } catch (const std::exception&) {
          if (work->isCompleted()) throw;
          if (peerFailed.load()) {
            error = "another rank reported a failure";
            break;
          }
          if (Clock::now() > deadline) {
            error = "timed out";
            break;
          }
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!error.empty()) {
      if (const auto newline = error.find('\n'); newline != std::string::npos) error.resize(newline);
      const auto [why, culprit] = diagnose();
      const std::string message = "rank " + std::to_string(rank) + ": collective #" + std::to_string(index) + " (" +
                                  what + ") failed after " + secondsText(Clock::now() - begin) + " (timeout " +
                                  secondsText(options.timeout) + "): " + why + " [" + error + "]";
      {
        const std::lock_guard<std::mutex> lock(statsMutex);
        failure = message;
      }
      throw DistributedError(message, culprit);
    }
    const std::lock_guard<std::mutex> lock(statsMutex);
    ++stats.calls;
    stats.bytesSent += bytesSent;
    if (std::string_view(what) == "all-to-all") stats.allToAllBytes += bytesSent;
    stats.seconds += std::chrono::duration<double>(Clock::now() - begin).count();
  }

  at::Tensor allGather(CollectiveBackend* group, int size, const at::Tensor& input, const char* what) {
    if (group == nullptr) return input.unsqueeze(0);
    std::vector<at::Tensor> inputs{wire(input.contiguous())};
    std::vector<std::int64_t> shape{size};
    shape.insert(shape.end(), input.sizes().begin(), input.sizes().end());
    const at::Tensor out = at::empty(shape, input.options());
    std::vector<std::vector<at::Tensor>> outputs{wire(out).unbind(0)};
    run(what, input.nbytes() * static_cast<std::uint64_t>(size - 1), [&] { return group->allgather(outputs, inputs); });
    return out;
  }
};

DistributedGroup::DistributedGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DistributedGroup::~DistributedGroup() { impl_->stopHeartbeat(); }

std::shared_ptr<DistributedGroup> DistributedGroup::join(const GroupOptions& options) {
  const Rendezvous& r = options.rendezvous;
  if (options.guidanceGroups != 1 && options.guidanceGroups != 2)
    throw std::invalid_argument("guidance groups: 1 or 2");
  if (r.worldSize % options.guidanceGroups != 0)
    throw std::invalid_argument("guidance in parallel needs an even number of ranks (" + std::to_string(r.worldSize) +
                                ")");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->rank = r.rank;
  impl->world = r.worldSize;
  impl->guidanceSize = options.guidanceGroups;
  impl->sequenceSize = r.worldSize / options.guidanceGroups;
  const std::string where = r.masterAddress + ":" + std::to_string(r.masterPort);
  try {
    impl->store = connectStore(r, r.rank == 0 && !r.agentStore, true, options.timeout);
  } catch (const std::exception& e) {
    std::string error = e.what();
    if (const auto newline = error.find('\n'); newline != std::string::npos) error.resize(newline);
    throw DistributedError("rank " + std::to_string(r.rank) + " of " + std::to_string(r.worldSize) +
                               ": the rendezvous at " + where + " did not complete within " +
                               std::to_string(options.timeout.count() / 1000) + " s (" +
                               (r.rank == 0 ? "not every rank joined" : "rank 0 cannot be reached") + "): " + error,
                           r.rank == 0 ? -1 : 0);
  }
  Impl& m = *impl;
  m.startHeartbeat();
  const std::string host = isLoopback(r.masterAddress) ? "127.0.0.1" : std::string();
  auto make = [&](const std::string& name, const std::vector<int>& members) -> c10::intrusive_ptr<CollectiveBackend> {
    if (members.size() <= 1) return {};
    int mine = -1;
    for (std::size_t i = 0; i < members.size(); ++i)
      if (members[i] == m.rank) mine = static_cast<int>(i);
    const auto store = c10::make_intrusive<::c10d::PrefixStore>("shotchain/" + name, m.store);
    const int size = static_cast<int>(members.size());
    if (options.cuda && name != "world") return makeNcclBackend(store, mine, size, options.timeout);
    return makeGlooBackend(store, mine, size, options.timeout, host);
  };
  try {
    std::vector<int> all(static_cast<std::size_t>(m.world));
    for (int i = 0; i < m.world; ++i) all[static_cast<std::size_t>(i)] = i;
    m.worldGroup = make("world", all);
    std::vector<int> sequence, guidance;
    for (int u = 0; u < m.sequenceSize; ++u) sequence.push_back(m.guidanceRank() * m.sequenceSize + u);
    for (int g = 0; g < m.guidanceSize; ++g) guidance.push_back(g * m.sequenceSize + m.sequenceRank());
    m.sequenceGroup = make("sequence" + std::to_string(m.guidanceRank()), sequence);
    m.guidanceGroup = make("guidance" + std::to_string(m.sequenceRank()), guidance);
  } catch (const std::exception& e) {
    m.stopHeartbeat();
    std::string error = e.what();
    if (const auto newline = error.find('\n'); newline != std::string::npos) error.resize(newline);
    throw DistributedError("rank " + std::to_string(r.rank) + ": the process groups did not form: " + error, -1);
  }
  return std::shared_ptr<DistributedGroup>(new DistributedGroup(std::move(impl)));
}

int DistributedGroup::rank() const { return impl_->rank; }
int DistributedGroup::worldSize() const { return impl_->world; }
std::chrono::milliseconds DistributedGroup::timeout() const { return impl_->options.timeout; }
int DistributedGroup::sequenceRank() const { return impl_->sequenceRank(); }
int DistributedGroup::sequenceSize() const { return impl_->sequenceSize; }
int DistributedGroup::guidanceRank() const { return impl_->guidanceRank(); }
int DistributedGroup::guidanceSize() const { return impl_->guidanceSize; }

at::Tensor DistributedGroup::allToAll(const at::Tensor& input) {
  Impl& m = *impl_;
  if (!m.sequenceGroup) return input;
  at::Tensor in = input.contiguous();
  at::Tensor out = at::empty_like(in);
  at::Tensor inWire = wire(in), outWire = wire(out);
  std::vector<std::int64_t> counts;
  const auto sent =
      in.nbytes() / static_cast<std::uint64_t>(m.sequenceSize) * static_cast<std::uint64_t>(m.sequenceSize - 1);
  m.run("all-to-all", sent, [&] { return m.sequenceGroup->alltoall_base(outWire, inWire, counts, counts); });
  return out;
}

at::Tensor DistributedGroup::allGather(const at::Tensor& input) {
  return impl_->allGather(impl_->sequenceGroup.get(), impl_->sequenceSize, input, "all-gather of tokens");
}

at::Tensor DistributedGroup::guidanceAllGather(const at::Tensor& input) {
  return impl_->allGather(impl_->guidanceGroup.get(), impl_->guidanceSize, input, "all-gather of guidance");
}

void DistributedGroup::barrier() {
  Impl& m = *impl_;
  if (!m.worldGroup) return;
  m.run("barrier", 0, [&] { return m.worldGroup->barrier(); });
}

std::int64_t DistributedGroup::maxOverWorld(std::int64_t value) {
  const at::Tensor all =
      impl_->allGather(impl_->worldGroup.get(), impl_->world, at::full({1}, value, at::kLong), "all-gather");
  return all.max().item<std::int64_t>();
}

CollectiveStats DistributedGroup::stats() const {
  const std::lock_guard<std::mutex> lock(impl_->statsMutex);
  return impl_->stats;
}

void DistributedGroup::resetStats() {
  const std::lock_guard<std::mutex> lock(impl_->statsMutex);
  impl_->stats = {};
}

std::string DistributedGroup::failure() const {
  const std::lock_guard<std::mutex> lock(impl_->statsMutex);
  return impl_->failure;
}

void DistributedGroup::reportFailure(const std::string& message) {
  try {
    impl_->store->set(failureKey(impl_->rank), bytesOf(message));
    impl_->store->add(kFailures, 1);
  } catch (const std::exception&) {
  }
}

}  // namespace shotchain::distributed
