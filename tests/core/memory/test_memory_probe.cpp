#include <QTest>

#include <atomic>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "memory/counting_cpu_allocator.h"
#include "memory/memory_probe.h"
#include "test_registry.h"

using namespace shotchain;

class MemoryProbeTest : public QObject {
  Q_OBJECT

  std::unique_ptr<memory::MemoryProbe> probe_;

 private Q_SLOTS:
  void initTestCase() {
    probe_ = memory::makeCpuMemoryProbe();
    QVERIFY(memory::countingCpuAllocatorInstalled());
  }

  void a256MiBTensorIsCountedAndReleased() {
    constexpr std::uint64_t kBytes = 256ull << 20;
    probe_->resetPeak();
    const memory::MemorySample before = probe_->sample();
    std::uint64_t during = 0;
    {
      at::Tensor t = at::empty({static_cast<std::int64_t>(kBytes / 4)}, at::kFloat);
      t.fill_(1.0f);
      during = probe_->sample().allocated;
      QVERIFY2(during >= before.allocated + kBytes, qPrintable(QString("%1 -> %2").arg(before.allocated).arg(during)));
    }
    const memory::MemorySample after = probe_->sample();
    QVERIFY(after.allocated <= during - kBytes);
    QCOMPARE(after.allocated, before.allocated);
    QVERIFY(after.peakAllocated >= before.allocated + kBytes);  // the peak holds after the free
    probe_->resetPeak();
    QCOMPARE(probe_->sample().peakAllocated, probe_->sample().allocated);
  }

  void hostFiguresAreSane() {
    const memory::MemorySample s = probe_->sample();
    QCOMPARE(QString::fromStdString(s.device), QString("cpu"));
    QVERIFY(s.deviceTotal > (256ull << 20));
    QVERIFY(s.deviceFree > 0 && s.deviceFree <= s.deviceTotal);
    QVERIFY(s.reserved >= s.active - s.inactiveSplit);
    QVERIFY(s.freeFragmentation >= 0.0 && s.freeFragmentation <= 1.0);
    QVERIFY(s.seconds > 0);
  }

  void freedSmallBlocksShowAsInactiveSplitBytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    QSKIP("a sanitizer's allocator replaces glibc malloc, whose free chunks (mallinfo2) this figure reads");
#endif
    // Interleave small live and freed allocations so freed chunks stay trapped between live ones.
    std::vector<at::Tensor> keep, drop;
    for (int i = 0; i < 2000; ++i) {
      (i % 2 ? keep : drop).push_back(at::empty({1024}, at::kFloat));
    }
    const std::uint64_t before = probe_->sample().inactiveSplit;
    drop.clear();
    const std::uint64_t after = probe_->sample().inactiveSplit;
    QVERIFY2(after >= before + 1000 * 4096 / 2, qPrintable(QString("%1 -> %2").arg(before).arg(after)));
  }

  void transfersAreCountedSinceTheMark() {
    probe_->markTransfers();
    QCOMPARE(probe_->sample().transferredBytes, std::uint64_t(0));
    probe_->recordTransfer(1000);
    probe_->recordTransfer(24);
    QCOMPARE(probe_->sample().transferredBytes, std::uint64_t(1024));
    probe_->markTransfers();
    QCOMPARE(probe_->transferredBytes(), std::uint64_t(0));
  }

  void samplingIsThreadSafeWhileTensorsComeAndGo() {
    std::atomic<bool> stop{false};
    std::atomic<int> samples{0}, insane{0};
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i)
      readers.emplace_back([&] {
        while (!stop) {
          const memory::MemorySample s = probe_->sample();
          if (s.freeFragmentation < 0.0 || s.freeFragmentation > 1.0 || s.deviceTotal == 0) ++insane;
          ++samples;
        }
      });
    const std::uint64_t base = memory::cpuAllocationStats().allocated;
    for (int i = 0; samples < 300 || i < 300; ++i) at::Tensor t = at::ones({4096 + i % 512}, at::kFloat);
    stop = true;
    for (auto& t : readers) t.join();
    QCOMPARE(insane.load(), 0);
    QCOMPARE(memory::cpuAllocationStats().allocated, base);
  }

  void refusedAllocationsAreCountedAsOutOfMemory() {
    const std::uint64_t before = probe_->sample().outOfMemoryEvents;
    bool threw = false;
    try {
      at::Tensor t = at::empty({std::int64_t(1) << 60}, at::kByte);
    } catch (const c10::Error&) {
      threw = true;
    }
    QVERIFY(threw);
    QCOMPARE(probe_->sample().outOfMemoryEvents, before + 1);
  }
};

SHOTCHAIN_TEST(MemoryProbeTest, Appless)
#include "test_memory_probe.moc"
