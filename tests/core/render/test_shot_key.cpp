#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "io/file_fingerprint.h"
#include "test_registry.h"

using namespace shotchain;

class TestShotKey : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void checkpointFingerprintsComeFromTheirPickle() {
    const std::filesystem::path golden(SHOTCHAIN_GOLDEN_DIR);
    const std::string state = io::fileFingerprint(golden / "wan_dit_tiny_state.pt");
    QCOMPARE(state.size(), std::size_t{32});
    QCOMPARE(io::fileFingerprint(golden / "wan_dit_tiny_state.pt"), state);
    QVERIFY(io::fileFingerprint(golden / "wan_dit_tiny_nested.pt") != state);
    QVERIFY(io::fileFingerprint(golden / "wan_dit_tiny.safetensors") != state);
  }
};

SHOTCHAIN_TEST(TestShotKey, Appless)
#include "test_shot_key.moc"
