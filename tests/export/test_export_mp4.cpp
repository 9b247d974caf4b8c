#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "export/mp4_encoder.h"
#include "export/png_frame.h"
#include "export/video_probe.h"
#include "export_test_frames.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::exporting;
using shotchain::testing::errorOf;
using shotchain::testing::readFile;
using shotchain::testing::syntheticFrame;
using shotchain::testing::temporaryFilesIn;
using shotchain::testing::writeFile;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> writeFrames(const fs::path& folder, int count, int width, int height) {
  fs::create_directories(folder);
  std::vector<fs::path> paths;
  for (int i = 0; i < count; ++i) {
    paths.push_back(folder / ("f" + std::to_string(i) + ".png"));
    writePngFrame(syntheticFrame(width, height, i), paths.back());
  }
  return paths;
}

}  // namespace

class TestExportMp4 : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void twentyFramesAt16FpsReopenAsH264() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const auto frames = writeFrames(root / "frames", 20, 64, 48);
    const fs::path movie = root / "sequence.mp4";
    const Mp4Encoding encoding = encodeSequenceMp4(frames, 16.0, movie);
    QCOMPARE(encoding.encoder, std::string("libx264"));
    QVERIFY(encoding.warnings.empty());
    QCOMPARE(encoding.frames, 20);
    QCOMPARE(temporaryFilesIn(root), std::string());

    const VideoProbe probe = probeVideo(movie);
    QCOMPARE(probe.codec, std::string("h264"));
    QCOMPARE(probe.pixelFormat, std::string("yuv420p"));
    QCOMPARE(probe.width, 64);
    QCOMPARE(probe.height, 48);
    QCOMPARE(probe.packets, 20);
    QCOMPARE(probe.decodedFrames, 20);
    QCOMPARE(probe.fps, 16.0);
    QVERIFY2(std::abs(probe.durationSeconds - 1.25) < 1e-6, qPrintable(QString::number(probe.durationSeconds)));
  }

  void ffprobeAgrees() {
    const QString ffprobe = QStandardPaths::findExecutable("ffprobe");
    if (ffprobe.isEmpty()) QSKIP("ffprobe is not installed (Debian package ffmpeg)");
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path movie = root / "sequence.mp4";
    encodeSequenceMp4(writeFrames(root / "frames", 20, 64, 48), 16.0, movie);

    QProcess process;
    process.start(ffprobe, {"-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                            "stream=codec_name,pix_fmt,width,height,nb_read_frames,r_frame_rate,duration", "-of",
                            "json", QString::fromStdString(movie.string())});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    const QJsonObject stream =
        QJsonDocument::fromJson(process.readAllStandardOutput()).object()["streams"].toArray().at(0).toObject();
    QCOMPARE(stream["codec_name"].toString(), QString("h264"));
    QCOMPARE(stream["pix_fmt"].toString(), QString("yuv420p"));
    QCOMPARE(stream["width"].toInt(), 64);
    QCOMPARE(stream["height"].toInt(), 48);
    QCOMPARE(stream["nb_read_frames"].toString(), QString("20"));
    QCOMPARE(stream["r_frame_rate"].toString(), QString("16/1"));
    QCOMPARE(stream["duration"].toString().toDouble(), 1.25);
  }

  void decodedPixelsMatchTheirPngs() {
    // The colour conversion is right (matrix, range): ffmpeg decodes the movie back to RGB.
    const QString ffmpeg = QStandardPaths::findExecutable("ffmpeg");
    if (ffmpeg.isEmpty()) QSKIP("ffmpeg is not installed (Debian package ffmpeg)");
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    render::RgbFrame gradient = syntheticFrame(64, 48, 0);
    render::RgbFrame flat = gradient;
    for (int y = 0, i = 0; y < 48; ++y)
      for (int x = 0; x < 64; ++x, i += 3) {
        const std::uint8_t smooth[3] = {static_cast<std::uint8_t>(x * 4), static_cast<std::uint8_t>(y * 5), 128};
        const std::uint8_t plain[3] = {200, 60, 30};
        std::copy(smooth, smooth + 3, gradient.rgb.begin() + i);
        std::copy(plain, plain + 3, flat.rgb.begin() + i);
      }
    const std::vector<fs::path> frames = {root / "gradient.png", root / "flat.png"};
    writePngFrame(gradient, frames[0]);
    writePngFrame(flat, frames[1]);
    const fs::path movie = root / "sequence.mp4";
    encodeSequenceMp4(frames, 16.0, movie);

    QProcess process;
    process.start(ffmpeg, {"-v", "error", "-i", QString::fromStdString(movie.string()),
                           QString::fromStdString((root / "back%d.png").string())});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    for (int n = 0; n < 2; ++n) {
      const render::RgbFrame source = readPngFrame(frames[static_cast<std::size_t>(n)]);
      const render::RgbFrame decoded = readPngFrame(root / ("back" + std::to_string(n + 1) + ".png"));
      QCOMPARE(decoded.width, source.width);
      double sum = 0;
      int worst = 0;
      for (std::size_t i = 0; i < source.rgb.size(); ++i) {
        const int error = std::abs(static_cast<int>(source.rgb[i]) - static_cast<int>(decoded.rgb[i]));
        sum += error;
        worst = std::max(worst, error);
      }
      const double mean = sum / static_cast<double>(source.rgb.size());
      QVERIFY2(mean < 3.5 && (n == 0 || worst <= 5),  // measured: 2.0 mean; 1.3 mean, 3 worst
               qPrintable(QString("frame %1: mean abs error %2, worst %3").arg(n + 1).arg(mean).arg(worst)));
    }
  }

  void theSameFramesGiveTheSameBytes() {
    // A resumed render re-encodes the movie; it must equal an uninterrupted render's byte for byte.
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const auto frames = writeFrames(root / "frames", 12, 64, 48);
    // Three encodes: on an AVX-512 machine x264's own CPU choice made the third one differ.
    for (const char* name : {"a.mp4", "b.mp4", "c.mp4"}) encodeSequenceMp4(frames, 16.0, root / name);
    const std::string a = readFile(root / "a.mp4");
    for (const char* name : {"b.mp4", "c.mp4"}) {
      const std::string other = readFile(root / name);
      const auto firstDifference = std::mismatch(a.begin(), a.end(), other.begin(), other.end()).first - a.begin();
      QVERIFY2(a == other,
               (std::string(name) + ": sizes " + std::to_string(a.size()) + " and " + std::to_string(other.size()) +
                ", first difference at byte " + std::to_string(firstDifference))
                   .c_str());
    }
  }

  void oddSizesArePaddedToEven() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path movie = root / "odd.mp4";
    const Mp4Encoding encoding = encodeSequenceMp4(writeFrames(root / "frames", 5, 33, 17), 16.0, movie);
    QCOMPARE(encoding.width, 34);
    QCOMPARE(encoding.height, 18);
    const VideoProbe probe = probeVideo(movie);
    QCOMPARE(probe.width, 34);
    QCOMPARE(probe.height, 18);
    QCOMPARE(probe.decodedFrames, 5);
  }

  void mixedSizesAreCentredWithAWarning() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    auto frames = writeFrames(root / "a", 3, 64, 64);
    const auto wide = writeFrames(root / "b", 3, 96, 64);
    frames.insert(frames.end(), wide.begin(), wide.end());
    const fs::path movie = root / "mixed.mp4";
    const Mp4Encoding encoding = encodeSequenceMp4(frames, 24.0, movie);
    QCOMPARE(encoding.width, 96);
    QCOMPARE(encoding.height, 64);
    QCOMPARE(encoding.warnings.size(), std::size_t{1});
    QCOMPARE(probeVideo(movie).decodedFrames, 6);
  }

  void aFailureMidwayLeavesTheOldMovie() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    auto frames = writeFrames(root / "frames", 20, 64, 48);
    const fs::path movie = root / "sequence.mp4";
    writeFile(movie, "the previous render");
    // Frame 11 has a valid header (so the size scan passes) and broken pixel data.
    const std::string png = readFile(frames[10]);
    writeFile(frames[10], png.substr(0, 60));
    const QString error = errorOf([&] { encodeSequenceMp4(frames, 16.0, movie); });
    QVERIFY2(error.contains(QString::fromStdString(frames[10].string())), qPrintable(error));
    QCOMPARE(readFile(movie), std::string("the previous render"));
    QCOMPARE(temporaryFilesIn(root), std::string());

    fs::remove(movie);
    errorOf([&] { encodeSequenceMp4(frames, 16.0, movie); });
    QVERIFY(!fs::exists(movie));
    QCOMPARE(temporaryFilesIn(root), std::string());
  }

  void anUnwritableFolderIsNamed() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const auto frames = writeFrames(root / "frames", 2, 16, 16);
    const fs::path notAFolder = root / "plain-file";
    writeFile(notAFolder, "x");
    const QString error = errorOf([&] { encodeSequenceMp4(frames, 16.0, notAFolder / "sequence.mp4"); });
    QVERIFY2(error.contains(QString::fromStdString(notAFolder.string())), qPrintable(error));
  }

  void badInputIsRefused() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    QVERIFY(errorOf([&] { encodeSequenceMp4({}, 16.0, root / "x.mp4"); }).contains("no frames"));
    const auto frames = writeFrames(root / "frames", 1, 16, 16);
    QVERIFY(errorOf([&] { encodeSequenceMp4(frames, 0.0, root / "x.mp4"); }).contains("frame rate"));
    QVERIFY(!fs::exists(root / "x.mp4"));
  }
};

SHOTCHAIN_TEST(TestExportMp4, Core)
#include "test_export_mp4.moc"
