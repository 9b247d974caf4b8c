// A weights file cut short while it is mapped: a read past its new end gives zeros instead of SIGBUS, and the
// mapping (then the history, once it is gone) names the file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "io/mapped_file.h"
#include "test_registry.h"

using namespace shotchain;

class TestCutShortFile : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

 private Q_SLOTS:
  void aReadPastTheCutGivesZerosAndNamesTheFile() {
    const std::filesystem::path file = std::filesystem::path(dir_.path().toStdString()) / "weights.safetensors";
    std::ofstream(file, std::ios::binary) << std::string(1u << 20, '\x7f');
    const std::size_t mark = io::cutShortMark();
    {
      const std::shared_ptr<const io::MappedFile> mapping = io::MappedFile::map(file);
      const volatile std::byte* bytes = mapping->bytes().data();
      QCOMPARE(static_cast<int>(bytes[1000]), 0x7f);
      QVERIFY(!mapping->cutShortAt());
      QVERIFY(io::cutShortProblem(mark).empty());
      std::filesystem::resize_file(file, 200000);
      QCOMPARE(static_cast<int>(bytes[1000]), 0x7f);         // before the cut: the file's bytes
      QCOMPARE(static_cast<int>(bytes[900000]), 0);          // past it: zeros, no signal
      QCOMPARE(static_cast<int>(bytes[(1u << 20) - 1]), 0);  // to the mapping's end
      QVERIFY(mapping->cutShortAt().has_value());
      QVERIFY(*mapping->cutShortAt() >= 200000 && *mapping->cutShortAt() <= 900000);
      const QString problem = QString::fromStdString(io::cutShortProblem(mark));
      QVERIFY2(problem.contains("weights.safetensors: was cut short while in use (to 200000 of its 1048576 bytes)"),
               qPrintable(problem));
    }
    // Gone, it is still this render's problem, not a later one's.
    QVERIFY(!io::cutShortProblem(mark).empty());
    QVERIFY(io::cutShortProblem(io::cutShortMark()).empty());
  }

  // A SIGBUS from a mapping that is not ours keeps what it did before (here: the default, death by SIGBUS).
  void aSignalOutsideEveryMappingIsNotSwallowed() {
    const std::filesystem::path ours = std::filesystem::path(dir_.path().toStdString()) / "ours.bin";
    const std::filesystem::path other = std::filesystem::path(dir_.path().toStdString()) / "other.bin";
    std::ofstream(ours, std::ios::binary) << std::string(1u << 16, 'a');
    std::ofstream(other, std::ios::binary) << std::string(1u << 16, 'b');
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      const auto mapping = io::MappedFile::map(ours);  // the handler is in place
      const int fd = ::open(other.c_str(), O_RDONLY);
      const auto* bytes = static_cast<const volatile char*>(::mmap(nullptr, 1u << 16, PROT_READ, MAP_PRIVATE, fd, 0));
      ::ftruncate(::open(other.c_str(), O_WRONLY), 0);
      const char seen = bytes[40000];
      ::_exit(seen == 0 ? 3 : 4);
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, qPrintable(QString::number(status)));
  }
};

SHOTCHAIN_TEST(TestCutShortFile, Appless)
#include "test_cut_short_file.moc"
