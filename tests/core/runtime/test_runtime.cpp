#include <QTest>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include <ATen/Parallel.h>

#include "runtime/cuda_module.h"
#include "runtime/thread_intra_op.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "util/byte_size.h"

using namespace shotchain;

class Runtime : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void threadsFollowTheCores() {
    at::set_num_threads(1);
    const runtime::RuntimeInfo info = runtime::initTorchRuntime();
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    QCOMPARE(at::get_num_threads(), cores);
    QCOMPARE(info.intraOpThreads, cores);
    QVERIFY(!info.torchVersion.empty());
    QVERIFY(!info.device.empty());
#ifndef SHOTCHAIN_WITH_CUDA
    QVERIFY(!info.cudaBuild);
#endif
  }

  // libtorch_cuda and the CUDA libraries it needs (~260 MB of every process) come only with the CUDA plugin.
  void noCudaLibraryWithoutThePlugin() {
    if (runtime::cudaModuleStatus().loaded) QSKIP("the CUDA plugin is loaded here");
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      QVERIFY2(line.find("libtorch_cuda") == std::string::npos && line.find("libcublas") == std::string::npos,
               line.c_str());
  }

  // The decode worker runs with one intra-op thread beside the sampling; the render thread and
  // threads started meanwhile keep the process-wide count.
  void aWorkersThreadCountStaysOnThatThread() {
    runtime::initTorchRuntime();
    const int cores = at::get_num_threads();
    if (cores < 2) QSKIP("one core: nothing to tell apart");
    const auto team = [] { return runtime::thisThreadIntraOpThreads(); };
    std::atomic<int> inside{0}, otherDuring{0}, insideAfter{0};
    std::atomic<bool> scoped{false}, checked{false};
    std::thread worker([&] {
      {
        const runtime::ThisThreadIntraOpThreads one(1);
        inside = team();
        scoped = true;
        while (!checked) std::this_thread::yield();
      }
      insideAfter = team();
    });
    while (!scoped) std::this_thread::yield();
    std::thread other([&] { otherDuring = team(); });
    other.join();
    const int mainDuring = team();
    checked = true;
    worker.join();
    QCOMPARE(inside.load(), 1);
    QCOMPARE(mainDuring, cores);
    QCOMPARE(otherDuring.load(), cores);
    QCOMPARE(insideAfter.load(), cores);
  }

  void byteSizesParse_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qulonglong>("bytes");
    QTest::newRow("GiB") << "16GiB" << qulonglong(16ull << 30);
    QTest::newRow("spaced") << " 512 MiB " << qulonglong(512ull << 20);
    QTest::newRow("G") << "1.5G" << qulonglong(3ull << 29);
    QTest::newRow("plain") << "1048576" << qulonglong(1048576);
    QTest::newRow("TiB") << "2tib" << qulonglong(2ull << 40);
    QTest::newRow("TB is SI") << "2tb" << qulonglong(2000000000000ull);
    QTest::newRow("GB is SI") << "16GB" << qulonglong(16000000000ull);
  }
  void byteSizesParse() {
    QFETCH(QString, text);
    QFETCH(qulonglong, bytes);
    const auto parsed = util::parseByteSize(text.toStdString());
    QVERIFY(parsed.has_value());
    QCOMPARE(qulonglong(*parsed), bytes);
  }

  void badByteSizesAreRefused() {
    for (const char* text : {"", "GiB", "12 parsecs", "1.5", "-3G", "99999999999TiB", "1 G B", "1.0001 kB"})
      QVERIFY2(!util::parseByteSize(text).has_value(), text);
  }

  void exactFormatRoundTrips() {
    for (std::uint64_t bytes : {16ull << 30, (3ull << 30) + 12345, 1ull << 20, 4096ull, 1ull})
      QCOMPARE(util::parseByteSize(util::formatByteSizeExact(bytes)).value(), bytes);
    QCOMPARE(util::formatByteSize(3ull << 29), std::string("1.50 GiB"));
    QCOMPARE(util::formatByteSizeExact(16000000000ull), std::string("16 GB"));
    QCOMPARE(util::formatByteSizeExact(16ull << 30), std::string("16 GiB"));
    QCOMPARE(util::formatByteSizeExact(3ull << 29), std::string("1.5 GiB"));
  }
};

SHOTCHAIN_TEST(Runtime, Appless)
#include "test_runtime.moc"
