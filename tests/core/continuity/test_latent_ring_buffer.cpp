#include <QTest>

#include <atomic>
#include <filesystem>
#include <thread>

#include <ATen/ATen.h>

#include "continuity/latent_ring_buffer.h"
#include "io/safetensors_reader.h"
#include "memory/counting_cpu_allocator.h"
#include "memory/memory_probe.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::continuity;
using shotchain::testing::errorOf;

namespace {

at::Tensor latent(std::int64_t frames, float fill = 0.0f) { return at::full({16, frames, 4, 4}, fill); }
constexpr std::uint64_t kFrameBytes = 16 * 4 * 4 * 4;

}  // namespace

class TestLatentRingBuffer : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void handoffIsZeroCopy() {
    LatentRingBuffer ring;
    const at::Tensor stored = at::randn({16, 5, 4, 4});
    ring.put("shot1", stored);

    const std::unique_ptr<memory::MemoryProbe> probe = memory::makeCpuMemoryProbe();
    // The probe works: a clone is counted.
    const std::uint64_t beforeClone = probe->sample().allocated;
    const at::Tensor copy = stored.clone();
    QCOMPARE(probe->sample().allocated - beforeClone, std::uint64_t{16 * 5 * 4 * 4 * 4});
    const std::uint64_t live = probe->sample().allocated;
    const std::uint64_t before = memory::cpuAllocationStats().allocations;
    probe->markTransfers();
    const std::optional<at::Tensor> view = ring.handoff("shot1");
    const std::optional<at::Tensor> tail = ring.handoffTail("shot1", 1);
    QCOMPARE(memory::cpuAllocationStats().allocations, before);  // no tensor storage was allocated
    QCOMPARE(probe->sample().allocated, live);
    QCOMPARE(probe->sample().transferredBytes, std::uint64_t{0});
    QVERIFY(view && tail);
    QVERIFY(view->storage().is_alias_of(stored.storage()));
    QCOMPARE(view->data_ptr(), stored.data_ptr());
    QVERIFY(view->unsafeGetTensorImpl() != stored.unsafeGetTensorImpl());  // a view, not the handle
    QVERIFY(at::equal(*view, stored));
    QVERIFY(tail->storage().is_alias_of(stored.storage()));
    QCOMPARE(tail->sizes(), at::IntArrayRef({16, 1, 4, 4}));
    QCOMPARE(tail->data_ptr<float>(), stored.data_ptr<float>() + 4 * 4 * 4);  // frame 4 of 5
    QVERIFY(at::equal(*tail, stored.narrow(1, 4, 1)));
    QCOMPARE(ring.stats().handoffBytesCopied, std::uint64_t{0});
    QCOMPARE(ring.stats().handoffs, std::uint64_t{2});
    QVERIFY(!ring.handoff("unknown"));
    QVERIFY(errorOf([&] { ring.handoffTail("shot1", 6); }).contains("5 latent frames"));
    QVERIFY(errorOf([&] { ring.handoffTail("shot1", 0); }).contains("latent frames"));
  }

  void evictsOldestByEntries() {
    LatentRingBuffer ring({3, 1u << 30});
    QVERIFY(ring.put("a", latent(1)).empty());
    ring.put("b", latent(1));
    ring.put("c", latent(1));
    QCOMPARE(ring.put("d", latent(1)), std::vector<std::string>{"a"});
    QCOMPARE(ring.tags(), (std::vector<std::string>{"b", "c", "d"}));
    // Replacing a tag makes it the newest, without growing the buffer.
    QVERIFY(ring.put("b", latent(1, 2.0f)).empty());
    QCOMPARE(ring.tags(), (std::vector<std::string>{"c", "d", "b"}));
    QCOMPARE(ring.handoff("b")->max().item<float>(), 2.0f);
    QCOMPARE(ring.put("e", latent(1)), std::vector<std::string>{"c"});
    const RingBufferStats s = ring.stats();
    QCOMPARE(s.entries, std::size_t{3});
    QCOMPARE(s.evictions, std::uint64_t{2});
    QCOMPARE(s.puts, std::uint64_t{6});
    QCOMPARE(s.bytes, 3 * kFrameBytes);
  }

  void evictsOldestByBytes() {
    LatentRingBuffer ring({100, 5 * kFrameBytes});
    ring.put("a", latent(2));
    ring.put("b", latent(2));
    QCOMPARE(ring.stats().bytes, 4 * kFrameBytes);
    QCOMPARE(ring.put("c", latent(2)), std::vector<std::string>{"a"});
    QCOMPARE(ring.stats().bytes, 4 * kFrameBytes);
    QCOMPARE(ring.put("d", latent(5)), (std::vector<std::string>{"b", "c"}));
    QCOMPARE(ring.tags(), std::vector<std::string>{"d"});
    // An entry larger than the whole buffer is refused and changes nothing.
    QVERIFY(errorOf([&] { ring.put("huge", latent(6)); }).contains("more than the buffer's limit"));
    QCOMPARE(ring.tags(), std::vector<std::string>{"d"});
    // Bytes are what the entry keeps alive: a view of a larger tensor counts its storage.
    LatentRingBuffer other({100, 1u << 30});
    const at::Tensor big = latent(4);
    other.put("tail", big.narrow(1, 3, 1));
    QCOMPARE(other.info("tail")->bytes, 4 * kFrameBytes);
    QCOMPARE(other.info("tail")->shape, (std::vector<std::int64_t>{16, 1, 4, 4}));
  }

  void eraseClearInfo() {
    LatentRingBuffer ring;
    ring.put("x", latent(2), {{"shot", "3"}});
    QVERIFY(ring.contains("x"));
    const auto info = ring.info("x");
    QVERIFY(info.has_value());
    QCOMPARE(info->dtype, std::string("Float"));
    QCOMPARE(info->device, std::string("cpu"));
    QCOMPARE(info->metadata.at("shot"), std::string("3"));
    QVERIFY(ring.erase("x"));
    QVERIFY(!ring.erase("x"));
    QCOMPARE(ring.stats().bytes, std::uint64_t{0});
    ring.put("y", latent(1));
    ring.clear();
    QCOMPARE(ring.stats().entries, std::size_t{0});
    QVERIFY(errorOf([&] { ring.put("", latent(1)); }).contains("empty"));
    QVERIFY(errorOf([&] { ring.put("z", at::Tensor()); }).contains("no tensor"));
    QVERIFY(errorOf([] { LatentRingBuffer({0, 1}); }).contains("at least one"));
  }

  void threadSafe() {
    LatentRingBuffer ring({4, 1u << 30});
    std::atomic<int> views{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < 4; ++w) {
      threads.emplace_back([&, w] {
        for (int i = 0; i < 300; ++i) {
          const std::string tag = "t" + std::to_string((w * 7 + i) % 9);
          ring.put(tag, latent(1, static_cast<float>(i)));
          if (auto v = ring.handoff(tag)) views += v->numel() == 256 ? 1 : 0;
          ring.stats();
          ring.tags();
        }
      });
    }
    for (auto& t : threads) t.join();
    const RingBufferStats s = ring.stats();
    QVERIFY(s.entries <= 4);
    QCOMPARE(s.bytes, s.entries * kFrameBytes);
    QCOMPARE(s.puts, std::uint64_t{1200});
    QVERIFY(views.load() > 0);
    QCOMPARE(static_cast<std::size_t>(ring.tags().size()), s.entries);
  }

  void saveAndLoadSafetensors() {
    const auto path = std::filesystem::temp_directory_path() / "shotchain_test_ring.safetensors";
    LatentRingBuffer ring;
    const at::Tensor a = at::randn({16, 3, 4, 6}), b = at::randn({16, 1, 4, 6}).to(at::kDouble);
    ring.put("shot-01", a, {{"prompt", "a red ball"}});
    ring.put("shot-02", b);
    ring.put("shot-03", latent(1));
    ring.save(path, {"shot-02", "shot-01"});

    const auto file = io::SafetensorsFile::open(path);
    QCOMPARE(file->header().metadata.at("format"), std::string("shotchain-latent-ring-v1"));
    QCOMPARE(file->header().tensors.size(), std::size_t{2});

    LatentRingBuffer later;
    const auto loaded = later.load(path);
    QCOMPARE(loaded, (std::vector<std::string>{"shot-02", "shot-01"}));
    QCOMPARE(later.tags(), loaded);
    QVERIFY(at::equal(*later.handoff("shot-01"), a));
    QVERIFY(at::equal(*later.handoff("shot-02"), b));
    QCOMPARE(later.handoff("shot-02")->scalar_type(), at::kDouble);
    QCOMPARE(later.info("shot-01")->metadata.at("prompt"), std::string("a red ball"));
    // The loaded entries own their memory (not the file mapping): the file can go.
    std::filesystem::remove(path);
    QVERIFY(at::equal(*later.handoff("shot-01"), a));

    ring.save(path);  // everything
    LatentRingBuffer all;
    QCOMPARE(all.load(path), (std::vector<std::string>{"shot-01", "shot-02", "shot-03"}));
    QVERIFY(errorOf([&] { ring.save(path, {"nope"}); }).contains("no entry"));
    std::filesystem::remove(path);

    // A safetensors file of another kind is refused by name.
    QVERIFY(errorOf([&] {
              all.load(std::filesystem::path(SHOTCHAIN_GOLDEN_DIR) / "schedule_io.safetensors");
            }).contains("not a ShotChain latent ring file"));
  }
};

SHOTCHAIN_TEST(TestLatentRingBuffer, Core)
#include "test_latent_ring_buffer.moc"
