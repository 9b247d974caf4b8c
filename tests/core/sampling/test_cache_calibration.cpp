// The calibration file `calibrate-cache` writes and the renderer reads: it round-trips, and a
// damaged or hostile one is refused with the file and the field named.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "sampling/cache_calibration.h"
#include "test_registry.h"
#include "test_support.h"
#include "util/atomic_file.h"

using namespace shotchain;
using namespace shotchain::sampling;

class TestCacheCalibration : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path path(const char* name) const { return std::filesystem::path(dir_.path().toStdString()) / name; }

  QString refusal(const std::string& text) const {
    util::writeFileAtomically(path("bad.cache.json"), text);
    try {
      (void)readCacheCalibration(path("bad.cache.json"));
    } catch (const std::exception& error) {
      return QString::fromStdString(error.what());
    }
    return {};
  }

 private Q_SLOTS:
  void roundTrips() {
    CacheCalibration c;
    c.model = "Wan 2.1 T2V, custom";
    c.steps = 3;
    c.shift = 5;
    c.shots = 2;
    c.magCacheRatios = {1.0, 1.0, 0.98, 0.97, 0.95, 0.96};
    c.teaCacheCoefficients = {1.5, -0.25, 0.125, 2.0, 0.0};
    util::writeFileAtomically(path("ok.cache.json"), cacheCalibrationJson(c));
    const CacheCalibration back = readCacheCalibration(path("ok.cache.json"));
    QCOMPARE(back.model, c.model);
    QCOMPARE(back.steps, 3);
    QCOMPARE(back.shots, 2);
    QCOMPARE(back.magCacheRatios, c.magCacheRatios);
    QCOMPARE(back.teaCacheCoefficients, c.teaCacheCoefficients);
  }

  void badFilesNameTheFileAndField_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* name, const char* text, const char* message) {
      QTest::newRow(name) << QString(text) << QString(message);
    };
    const char* head = R"({"format": "shotchain.cache-calibration/1", "steps": 2, )";
    row("not json", "{\"format\": ", "bad.cache.json");
    row("an array", "[1, 2]", "not a calibration file");
    row("no format", R"({"steps": 2})", "format: must be \"shotchain.cache-calibration/1\"");
    row("other format", R"({"format": "comfy", "steps": 2})", "format: must be");
    row("steps missing", R"({"format": "shotchain.cache-calibration/1"})", "steps: must be a whole number in 1..1000");
    row("steps negative", R"({"format": "shotchain.cache-calibration/1", "steps": -4})",
        "steps: must be a whole number");
    row("ratios too few", (std::string(head) + R"("magcache_ratios": [1, 1, 0.9]})").c_str(),
        "magcache_ratios: 3 entries; 4 expected");
    row("ratio not a number", (std::string(head) + R"("magcache_ratios": [1, 1, "x", 0.9]})").c_str(),
        "magcache_ratios[2]: must be a finite number");
    row("ratio zero", (std::string(head) + R"("magcache_ratios": [1, 1, 0, 0.9]})").c_str(),
        "magcache_ratios[2]: must be greater than 0");
    row("coefficients an object", (std::string(head) + R"("teacache_coefficients": {"a": 1}})").c_str(),
        "teacache_coefficients: must be an array");
    row("unknown field", (std::string(head) + R"("code": "import os"})").c_str(),
        "code: is not a field of a calibration file");
    row("key twice", R"({"format": "shotchain.cache-calibration/1", "steps": 2, "steps": 3})", "bad.cache.json");
    row("too deep", (std::string(head) + R"("teacache_coefficients": [[[[[1]]]]]})").c_str(), "bad.cache.json");
  }

  void badFilesNameTheFileAndField() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    const QString error = refusal(text.toStdString());
    QVERIFY2(!error.isEmpty(), "accepted");
    QVERIFY2(error.contains("bad.cache.json"), qPrintable(error));
    QVERIFY2(error.contains(message), qPrintable(error));
  }

  void notAFileIsRefused() {
    std::filesystem::create_directories(path("folder.cache.json"));
    for (const char* name : {"folder.cache.json", "missing.cache.json"}) {
      try {
        (void)readCacheCalibration(path(name));
        QFAIL("accepted");
      } catch (const std::exception& error) {
        QVERIFY2(QString(error.what()).contains(name), error.what());
      }
    }
  }
};

SHOTCHAIN_TEST(TestCacheCalibration, Appless)
#include "test_cache_calibration.moc"
