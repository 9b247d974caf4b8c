// `shotchain render workflows/demo_keyframes.json` (copied with its pictures): the keyframe demo (builtin:demo-keyframes,
// a first–last-frame image-to-video DiT trained on the demo's clips) starts each shot on its start picture, the
// second shot's start is the first's end (one picture, shared), and the blue shot lands on its end picture; the
// report holds each shot's landing figures. The first start picture is given as WebP, which must decode.
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

class RenderKeyframesDemo : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void theKeyframeDemoLandsOnItsPictures() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path sequence = workflowCopy("demo_keyframes.json", root);
    fs::create_directories(root / "images");
    for (const char* picture : {"red_circle_left.png", "red_circle_right.png", "red_circle_low_right.png",
                                "blue_circle_top.png", "blue_circle_bottom.png"})
      fs::copy_file(workflow("images") / picture, root / "images" / picture);
    // The first start picture as WebP (documented beside PNG, JPEG and BMP): it decodes at render time too.
    QImage left(q((root / "images" / "red_circle_left.png").string()));
    QVERIFY(left.save(q((root / "images" / "red_circle_left.webp").string()), "WEBP", 100));
    std::string document = readFile(sequence);
    document.replace(document.find("red_circle_left.png"), std::string("red_circle_left.png").size(),
                     "red_circle_left.webp");
    writeFile(sequence, document);
    const CliRun run = runCli({"render", q(sequence.string()), "--out", q((root / "out").string()), "--no-preview"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    const Json report = Json::parse(readFile(root / "out" / "report.json"));
    const Json& shots = report["shots"];
    QCOMPARE(shots.size(), std::size_t{3});
    QVERIFY(shots[1]["resolved"]["start_keyframe_shared"].get<bool>());
    for (const Json& shot : shots) {
      QCOMPARE(shot["keyframes"].size(), std::size_t{2});
      const Json& start = shot["keyframes"][0];
      QCOMPARE(start["end"].get<std::string>(), std::string("start"));
      QVERIFY2(!start["missed"].get<bool>() && start["ssim"].get<double>() > 0.8, start.dump().c_str());
    }
    const Json& blueEnd = shots[2]["keyframes"][1];
    QVERIFY2(blueEnd["ssim"].get<double>() > 0.7 && blueEnd["delta_e"].get<double>() < 10, blueEnd.dump().c_str());
  }

  // A start picture of 8192×8192, the documented largest, decodes (past the image library's own 128 MB default),
  // with nothing of the library's on the terminal.
  void aStartPictureAtTheSideLimitDecodes() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path sequence = workflowCopy("demo.json", root);
    {
      QImage big(8192, 8192, QImage::Format_RGB32);
      for (int y = 0; y < big.height(); ++y) {
        auto* row = reinterpret_cast<QRgb*>(big.scanLine(y));
        for (int x = 0; x < big.width(); ++x)
          row[x] = (x - 4096) * (x - 4096) + (y - 2048) * (y - 2048) < 1 << 22 ? qRgb(220, 30, 30) : qRgb(0, 0, 0);
      }
      QVERIFY(big.save(q((root / "big.png").string()), "PNG", 0));
    }
    Json document = Json::parse(readFile(sequence));
    document["shots"][0]["start_image"] = "big.png";
    writeFile(sequence, document.dump(2));
    const CliRun validate = runCli({"validate", q(sequence.string())});
    QVERIFY2(validate.exitCode == 0, qPrintable(validate.out));
    const CliRun run = runCli({"render", q(sequence.string()), "--out", q((root / "out").string()), "--shots", "1-1"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    QVERIFY2(!run.out.contains("imageio") && !run.out.contains("allocation limit"), qPrintable(run.out));
    const Json report = Json::parse(readFile(root / "out" / "report.json"));
    QCOMPARE(report["shots"][0]["conditioned_on"].get<std::string>(), std::string("start_image"));
  }
};

SHOTCHAIN_TEST(RenderKeyframesDemo, Core)
#include "test_render_keyframes_demo.moc"
