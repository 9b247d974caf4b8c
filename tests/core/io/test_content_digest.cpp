// A file's content digest follows every byte: a file rewritten in place at the same size, with its modification
// time put back, is a new file; the digest is kept per file stamp in this process and in the digest cache file.
#include <fcntl.h>
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <fstream>

#include "io/content_digest.h"
#include "test_registry.h"
#include "util/bounded_file.h"

using namespace shotchain;

class TestContentDigest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  void write(const std::filesystem::path& path, const std::string& bytes) const {
    std::ofstream out(path, std::ios::binary | std::ios::in | std::ios::out | std::ios::trunc);
    out << bytes;
  }

  // Rewrites byte `at` in place (no new inode, same size) and puts the modification time back.
  static void rewriteInPlace(const std::filesystem::path& path, std::size_t at, char value) {
    struct stat before {};
    QVERIFY(::stat(path.c_str(), &before) == 0);
    {
      std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
      file.seekp(static_cast<std::streamoff>(at));
      file.put(value);
    }
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    QVERIFY(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    struct stat after {};
    QVERIFY(::stat(path.c_str(), &after) == 0);
    QCOMPARE(after.st_size, before.st_size);
    QCOMPARE(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    QCOMPARE(after.st_ino, before.st_ino);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    ::setenv("SHOTCHAIN_CACHE_DIR", (root() / "cache").c_str(), 1);
  }

  void theDigestFollowsEveryByte() {
    const std::string bytes(3u << 20, 'w');  // past one read buffer's worth of pages
    write(root() / "a.bin", bytes);
    write(root() / "b.bin", bytes);
    QVERIFY(!io::knownContentDigest(root() / "a.bin"));
    const std::string a = io::contentDigest(root() / "a.bin");
    QCOMPARE(a.size(), std::size_t{32});
    QCOMPARE(io::contentDigest(root() / "b.bin"), a);  // the same bytes, another file
    QCOMPARE(io::knownContentDigest(root() / "a.bin").value_or(""), a);

    rewriteInPlace(root() / "a.bin", 2u << 20, 'x');
    QVERIFY(!io::knownContentDigest(root() / "a.bin"));  // the change time moved
    const std::string changed = io::contentDigest(root() / "a.bin");
    QVERIFY(changed != a);
    rewriteInPlace(root() / "a.bin", 2u << 20, 'w');
    QCOMPARE(io::contentDigest(root() / "a.bin"), a);
  }

  void theCacheFileHoldsTheDigests() {
    write(root() / "cached.bin", "weights");
    const std::string digest = io::contentDigest(root() / "cached.bin");
    QCOMPARE(io::digestCacheFile(), root() / "cache" / "file-digests.json");
    const std::string cache = util::readRegularFile(io::digestCacheFile(), 16u << 20);
    QVERIFY2(cache.find(digest) != std::string::npos, cache.c_str());
    QVERIFY(cache.find("shotchain.file-digests/1") != std::string::npos);
  }

  void whatIsNotAFileIsNamed() {
    std::filesystem::create_directories(root() / "folder.safetensors");
    for (const char* name : {"folder.safetensors", "gone.safetensors"}) try {
        io::contentDigest(root() / name);
        QFAIL("no error");
      } catch (const std::runtime_error& e) {
        QVERIFY2(QString(e.what()).contains(name), e.what());
      }
  }
};

SHOTCHAIN_TEST(TestContentDigest, Appless)
#include "test_content_digest.moc"
