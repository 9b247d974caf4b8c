#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

#include "test_registry.h"
#include "test_support.h"
#include "util/atomic_file.h"
#include "util/write_target.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace fs = std::filesystem;

namespace {

std::string refusal(const fs::path& path) {
  try {
    util::writeFileAtomically(path, "new");
  } catch (const util::FileWriteError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

class WriteTarget : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path at(const char* name) const { return fs::path(dir_.path().toStdString()) / name; }

 private Q_SLOTS:
  void aFifoIsNeverReplaced() {
    const fs::path fifo = at("out.json");
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string why = refusal(fifo);
    QVERIFY2(why.find("out.json: cannot save") != std::string::npos && why.find("FIFO") != std::string::npos,
             why.c_str());
    QVERIFY(fs::is_fifo(fifo));
  }

  void aFolderIsNeverReplaced() {
    const fs::path folder = at("folder.json");
    fs::create_directory(folder);
    QVERIFY(refusal(folder).find("is a directory, not a file") != std::string::npos);
    QVERIFY(fs::is_directory(folder));
  }

  void aLinkToADeviceIsRefusedAndStaysALink() {
    const fs::path link = at("null.json");
    fs::create_symlink("/dev/null", link);
    const std::string why = refusal(link);
    QVERIFY2(why.find("/dev/null is a device, not a file") != std::string::npos, why.c_str());
    QVERIFY(fs::is_symlink(link));
    QVERIFY(fs::is_character_file("/dev/null"));
  }

  void aLinkIsFollowedToTheRealFile() {
    fs::create_directory(at("real"));
    writeFile(at("real") / "seq.json", "old");
    const fs::path link = at("seq-link.json");
    fs::create_symlink("real/seq.json", link);  // relative to the link's folder
    const fs::path chain = at("chain.json");
    fs::create_symlink(link, chain);
    util::writeFileAtomically(chain, "new");
    QCOMPARE(readFile(at("real") / "seq.json"), std::string("new"));
    QVERIFY(fs::is_symlink(link));
    QVERIFY(fs::is_symlink(chain));
    QCOMPARE(util::resolveWriteTarget(chain), at("real") / "seq.json");
  }

  void aDanglingLinkCreatesItsTarget() {
    const fs::path link = at("dangling.json");
    fs::create_symlink("made.json", link);
    util::writeFileAtomically(link, "made");
    QCOMPARE(readFile(at("made.json")), std::string("made"));
    QVERIFY(fs::is_symlink(link));
  }

  void aLinkLoopIsRefused() {
    fs::create_symlink("loop-b.json", at("loop-a.json"));
    fs::create_symlink("loop-a.json", at("loop-b.json"));
    QVERIFY(refusal(at("loop-a.json")).find("loop") != std::string::npos);
  }

  void aPlainPathIsItself() {
    QCOMPARE(util::resolveWriteTarget(at("fresh.json")), at("fresh.json"));
    writeFile(at("plain.json"), "x");
    QCOMPARE(util::resolveWriteTarget(at("plain.json")), at("plain.json"));
  }
};

SHOTCHAIN_TEST(WriteTarget, Core)
#include "test_write_target.moc"
