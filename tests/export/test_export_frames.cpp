#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "export/frame_file_writer.h"
#include "export/image_messages.h"
#include "export/png_frame.h"
#include "export/shot_paths.h"
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

// Records what reaches the end of an observer chain.
struct RecordingObserver : render::RenderObserver {
  std::vector<std::string> calls;
  std::vector<render::RenderWarning> warnings;
  int framesSeen = 0;
  void shotStarted(const render::ShotStarted&) override { calls.push_back("shotStarted"); }
  void stepDone(const render::StepDone&) override { calls.push_back("stepDone"); }
  void framesDecoded(const render::FramesDecoded& event) override {
    calls.push_back("framesDecoded");
    framesSeen += static_cast<int>(event.frames.size());
  }
  void shotFinished(const render::ShotFinished&) override { calls.push_back("shotFinished"); }
  void sequenceFinished(const render::SequenceFinished&) override { calls.push_back("sequenceFinished"); }
  void warning(const render::RenderWarning& event) override {
    calls.push_back("warning");
    warnings.push_back(event);
  }
  void failed(const render::RenderFailure&) override { calls.push_back("failed"); }
};

render::ShotStarted started(int index, const std::string& id, int frames, bool reused = false) {
  render::ShotStarted event;
  event.index = index;
  event.count = 3;
  event.id = id;
  event.frames = frames;
  event.reused = reused;
  return event;
}

render::FramesDecoded decoded(int shotIndex, int firstFrame, int count, int shotFrames, int width = 12,
                              int height = 8) {
  render::FramesDecoded event;
  event.shotIndex = shotIndex;
  event.firstFrame = firstFrame;
  event.shotFrames = shotFrames;
  for (int i = 0; i < count; ++i)
    event.frames.push_back(syntheticFrame(width, height, shotIndex * 100 + firstFrame + i));
  return event;
}

bool sameFrame(const render::RgbFrame& a, const render::RgbFrame& b) {
  return a.width == b.width && a.height == b.height && a.rgb == b.rgb;
}

}  // namespace

class TestExportFrames : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void shotPathsFollowTheNaming() {
    const fs::path out = "/renders/a.render";
    QCOMPARE(shotDirectory(out, 0, "intro").string(), std::string("/renders/a.render/shots/01-intro"));
    QCOMPARE(shotDirectory(out, 11, "shot-12").string(), std::string("/renders/a.render/shots/12-shot-12"));
    QCOMPARE(shotDirectoryName(99, "x"), std::string("100-x"));
    QCOMPARE(sanitizedShotId("../etc/pass wd"), std::string("___etc_pass_wd"));
    QCOMPARE(sanitizedShotId(""), std::string("shot"));
    QCOMPARE(frameFileName(1), std::string("000001.png"));
    QCOMPARE(frameFile(shotDirectory(out, 1, "b"), 42).string(),
             std::string("/renders/a.render/shots/02-b/frames/000042.png"));
  }

  void pngRoundTripKeepsEveryPixel() {
    QTemporaryDir dir;
    const fs::path path = fs::path(dir.path().toStdString()) / "frame.png";
    const render::RgbFrame frame = syntheticFrame(37, 21, 3);  // odd sizes: rows are not 4-byte aligned
    writePngFrame(frame, path);
    QCOMPARE(readFile(path).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    const render::RgbFrame back = readPngFrame(path);
    QCOMPARE(back.width, 37);
    QCOMPARE(back.height, 21);
    QVERIFY(back.rgb == frame.rgb);
    QCOMPARE(temporaryFilesIn(path.parent_path()), std::string());
  }

  // What a decoder says while a picture is read (libjpeg's warning about a JPEG cut short, which Qt still
  // decodes) is kept by the reader instead of reaching stderr; the render's reader refuses such a file in words.
  void decoderChatterIsKeptWhileAPictureIsRead() {
    QTemporaryDir dir;
    const fs::path path = fs::path(dir.path().toStdString()) / "cut.jpg";
    QImage picture(64, 64, QImage::Format_RGB888);
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) picture.setPixel(x, y, qRgb(x * 4, y * 4, (x * y) % 256));
    QVERIFY(picture.save(QString::fromStdString(path.string()), "JPEG"));
    const std::string bytes = readFile(path);
    writeFile(path, bytes.substr(0, bytes.size() / 2));
    std::string said;
    {
      const ImageMessages decoder;
      (void)QImage(QString::fromStdString(path.string()));
      said = decoder.text();
    }
    QVERIFY2(said.find("JPEG") != std::string::npos, said.c_str());
    try {
      (void)readPngFrame(path);
      QFAIL("a JPEG cut short was read");
    } catch (const std::runtime_error& error) {
      QVERIFY2(std::string(error.what()).find("is a truncated JPEG image") != std::string::npos, error.what());
    }
  }

  void aFailedPngWriteLeavesTheOldFile() {
    QTemporaryDir dir;
    const fs::path path = fs::path(dir.path().toStdString()) / "000001.png";
    writeFile(path, "old content");
    render::RgbFrame broken = syntheticFrame(8, 8, 1);
    broken.rgb.resize(100);  // not 8*8*3
    const QString error = errorOf([&] { writePngFrame(broken, path); });
    QVERIFY2(error.contains(QString::fromStdString(path.string())), qPrintable(error));
    QCOMPARE(readFile(path), std::string("old content"));
    QCOMPARE(temporaryFilesIn(path.parent_path()), std::string());
  }

  void anUnwritableFolderIsNamed() {
    QTemporaryDir dir;
    const fs::path notAFolder = fs::path(dir.path().toStdString()) / "plain-file";
    writeFile(notAFolder, "x");
    const fs::path path = notAFolder / "000001.png";
    const QString error = errorOf([&] { writePngFrame(syntheticFrame(4, 4, 0), path); });
    QVERIFY2(error.contains(QString::fromStdString(notAFolder.string())), qPrintable(error));

    if (::geteuid() != 0) {  // root writes through permissions
      const fs::path locked = fs::path(dir.path().toStdString()) / "locked";
      fs::create_directory(locked);
      fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
      const QString lockedError = errorOf([&] { writePngFrame(syntheticFrame(4, 4, 0), locked / "000001.png"); });
      fs::permissions(locked, fs::perms::owner_all);
      QVERIFY2(lockedError.contains(QString::fromStdString(locked.string())), qPrintable(lockedError));
    }
  }

  void writerWritesStreamedFramesAndForwardsEvents() {
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString();
    RecordingObserver next;
    FrameFileWriter writer(out, &next);

    // Left over from an earlier render of shot 1: removed when the shot starts again.
    const fs::path shot1 = shotDirectory(out, 0, "intro");
    fs::create_directories(framesDirectory(shot1));
    writeFile(frameFile(shot1, 9), "stale");
    writeFile(shot1 / "frames" / "notes.txt", "kept");
    // Shot 2 is reused: its frames on disk stay as they are.
    const fs::path shot2 = shotDirectory(out, 1, "walk");
    fs::create_directories(framesDirectory(shot2));
    writeFile(frameFile(shot2, 1), "reused");

    writer.shotStarted(started(0, "intro", 5));
    writer.stepDone(render::StepDone{});
    writer.framesDecoded(decoded(0, 0, 2, 5));
    writer.framesDecoded(decoded(0, 2, 3, 5));
    writer.shotFinished(render::ShotFinished{});
    writer.shotStarted(started(1, "walk", 1, true));
    writer.shotStarted(started(2, "odd id!", 1));
    writer.framesDecoded(decoded(2, 0, 1, 1, 7, 5));
    writer.sequenceFinished(render::SequenceFinished{});

    QCOMPARE(writer.framesWritten(), 6);
    QVERIFY(writer.errors().empty());
    QCOMPARE(next.framesSeen, 6);
    const std::vector<std::string> expected = {"shotStarted",   "stepDone",      "framesDecoded",
                                               "framesDecoded", "shotFinished",  "shotStarted",
                                               "shotStarted",   "framesDecoded", "sequenceFinished"};
    QVERIFY(next.calls == expected);

    for (int n = 1; n <= 5; ++n) QVERIFY(sameFrame(readPngFrame(frameFile(shot1, n)), syntheticFrame(12, 8, n - 1)));
    QVERIFY(!fs::exists(frameFile(shot1, 6)));
    QVERIFY(!fs::exists(frameFile(shot1, 9)));
    QCOMPARE(readFile(shot1 / "frames" / "notes.txt"), std::string("kept"));
    QCOMPARE(readFile(frameFile(shot2, 1)), std::string("reused"));
    QVERIFY(sameFrame(readPngFrame(out / "shots" / "03-odd_id_" / "frames" / "000001.png"), syntheticFrame(7, 5, 200)));
    QCOMPARE(temporaryFilesIn(framesDirectory(shot1)), std::string());
  }

  void writerReportsAFolderItCannotWrite() {
    QTemporaryDir dir;
    const fs::path out = fs::path(dir.path().toStdString()) / "plain-file";
    writeFile(out, "x");
    RecordingObserver next;
    FrameFileWriter writer(out, &next);
    writer.shotStarted(started(0, "intro", 2));
    writer.framesDecoded(decoded(0, 0, 1, 2));
    writer.framesDecoded(decoded(0, 1, 1, 2));
    QCOMPARE(writer.framesWritten(), 0);
    QVERIFY(!writer.errors().empty());
    QCOMPARE(next.warnings.size(), std::size_t{1});  // once per shot, not once per frame
    QCOMPARE(next.warnings[0].kind, std::string("output"));
    QCOMPARE(next.warnings[0].shotIndex, 0);
    QVERIFY2(next.warnings[0].message.find(out.string()) != std::string::npos, next.warnings[0].message.c_str());
    QCOMPARE(next.framesSeen, 2);  // events still reach the rest of the chain
  }

  void writerWithoutNextObserverWorks() {
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString();
    FrameFileWriter writer(out);
    writer.framesDecoded(decoded(0, 0, 1, 1));  // before its shot started: reported, not written
    QCOMPARE(writer.errors().size(), std::size_t{1});
    writer.shotStarted(started(0, "a", 1));
    writer.framesDecoded(decoded(0, 0, 1, 1));
    QCOMPARE(writer.framesWritten(), 1);
    QVERIFY(fs::exists(frameFile(shotDirectory(out, 0, "a"), 1)));
  }
};

SHOTCHAIN_TEST(TestExportFrames, Core)
#include "test_export_frames.moc"
