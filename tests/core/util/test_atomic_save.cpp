#include <QTest>

#include <csignal>

#include <sys/resource.h>
#include <sys/stat.h>

#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "util/atomic_file.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

std::size_t filesIn(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

// Writes fail with EFBIG past `bytes` while alive, as on a full disk; works as root, unlike permissions.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    oldHandler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, oldHandler_);
  }

 private:
  rlimit saved_{};
  void (*oldHandler_)(int) = nullptr;
};

}  // namespace

class AtomicSave : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void saveReplacesTheFile() {
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath("seq.json").toStdString();
    writeFile(file, "old");
    const Sequence s = *loadSequenceFile(workflow("demo.json")).sequence;
    saveSequenceFile(s, file);
    QCOMPARE(readFile(file), serializeSequence(s));
    QCOMPARE(filesIn(dir.path().toStdString()), std::size_t(1));
  }

  void failedWriteLeavesOldFileIntact() {
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath("seq.json").toStdString();
    const std::string old = readFile(workflow("resolution_change.json"));
    writeFile(file, old);
    const Sequence big = *loadSequenceFile(workflow("wan21_1.3b_five_shots.json")).sequence;
    QVERIFY(serializeSequence(big).size() > 1024);
    bool threw = false;
    {
      FileSizeLimit limit(1024);
      try {
        saveSequenceFile(big, file);
      } catch (const util::FileWriteError& error) {
        threw = true;
        QVERIFY2(q(error.what()).contains(q(file.string())), error.what());
        QVERIFY2(q(error.what()).contains("write failed"), error.what());
      }
    }
    QVERIFY(threw);
    QCOMPARE(readFile(file), old);
    QCOMPARE(filesIn(dir.path().toStdString()), std::size_t(1));  // no temporary file left behind
  }

  void missingFolderIsNamed() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "no" / "such" / "s.json";
    try {
      util::writeFileAtomically(file, "x");
      QFAIL("no error");
    } catch (const util::FileWriteError& error) {
      QVERIFY2(q(error.what()).startsWith(q(file.string())), error.what());
    }
  }

  void newFilesFollowTheUmask() {
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath("fresh.json").toStdString();
    const mode_t old = ::umask(027);
    util::writeFileAtomically(file, "x");
    ::umask(old);
    struct stat info {};
    ::stat(file.c_str(), &info);
    QCOMPARE(info.st_mode & 0777, 0640u);
  }

  void permissionsOfAnExistingFileAreKept() {
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath("s.json").toStdString();
    writeFile(file, "old");
    ::chmod(file.c_str(), 0640);
    util::writeFileAtomically(file, "new");
    struct stat info {};
    ::stat(file.c_str(), &info);
    QCOMPARE(info.st_mode & 0777, 0640u);
    QCOMPARE(readFile(file), std::string("new"));
  }
};

SHOTCHAIN_TEST(AtomicSave, Appless)
#include "test_atomic_save.moc"
