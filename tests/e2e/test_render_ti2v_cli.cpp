// `shotchain render` on Wan 2.2 TI2V from a ComfyUI-style models folder the test writes (tiny random TI2V
// DiT, tiny Wan 2.2 VAE beside a Wan 2.1 VAE, UMT5): shot 1 from a PNG start image, shots 2–3 with `latent`
// continuity; frames, MP4 and report written, and the report says what each shot started from.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "render/output_layout.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;

class RenderTi2vCli : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root_;

 private Q_SLOTS:
  void initTestCase() {
    root_ = dir_.path().toStdString();
    const TinyModelSet set = writeTinyModelSet(root_ / "raw", 41, false, 0, true);
    const fs::path models = root_ / "models";
    for (const char* sub : {"diffusion_models", "vae", "text_encoders"}) fs::create_directories(models / sub);
    fs::copy_file(set.dit, models / "diffusion_models" / "wan2.2_ti2v_tiny.safetensors");
    fs::copy_file(set.vae, models / "vae" / "wan2.2_vae.safetensors");
    fs::copy_file(golden("wan_vae_tiny.safetensors"), models / "vae" / "wan_2.1_vae.safetensors");
    fs::copy_file(set.textEncoder, models / "text_encoders" / "umt5.safetensors");
    fs::copy_file(set.tokenizer, root_ / "tokenizer.model");
    QImage picture(80, 48, QImage::Format_RGB888);
    for (int y = 0; y < picture.height(); ++y)
      for (int x = 0; x < picture.width(); ++x) picture.setPixel(x, y, qRgb(x * 3, 40 + y * 4, 200 - x * 2));
    QVERIFY(picture.save(q((root_ / "start.png").string())));

    Sequence sequence;
    sequence.settings.name = "ti2v three shots";
    sequence.settings.fps = 24;
    sequence.settings.model.builtin.clear();
    sequence.settings.model.folder = "models";
    sequence.settings.model.tokenizer = "tokenizer.model";
    sequence.settings.sampler.steps = 3;
    sequence.settings.policy = ResidencyPolicy::Pinned;
    const ContinuityMode modes[] = {ContinuityMode::None, ContinuityMode::Latent, ContinuityMode::Latent};
    for (int i = 0; i < 3; ++i) {
      Shot shot;
      shot.id = std::string(1, static_cast<char>('a' + i));
      shot.prompt = "a red circle moving right on a black background";
      shot.frames = 9;
      shot.width = 64;
      shot.height = 64;
      shot.seed = 200 + static_cast<std::uint64_t>(i);
      shot.continuity.mode = modes[i];
      sequence.shots.push_back(shot);
    }
    sequence.shots[0].startImage = "start.png";
    saveSequenceFile(sequence, root_ / "ti2v.json");
  }

  void modelsNamesTheFamilies() {
    const CliRun run = runCli({"models", q((root_ / "models").string())});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains("Wan 2.2 TI2V, tiny"), qPrintable(run.out));
    QVERIFY2(run.out.contains("Wan 2.2 VAE (tiny)"), qPrintable(run.out));
    QVERIFY2(run.out.contains("Wan 2.1 VAE (tiny)"), qPrintable(run.out));
  }

  void rendersTheChain() {
    const fs::path out = root_ / "out";
    const CliRun plan = runCli({"plan", q((root_ / "ti2v.json").string())});
    QVERIFY2(plan.exitCode == 0 && plan.out.contains("Wan 2.2 TI2V"), qPrintable(plan.out + plan.err));
    const CliRun run = runCli({"render", q((root_ / "ti2v.json").string()), "--out", q(out.string())});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    for (int i = 0; i < 3; ++i) {
      const fs::path shotDir = render::shotDirectory(out, i, std::string(1, static_cast<char>('a' + i)));
      const nlohmann::json shot = nlohmann::json::parse(readFile(render::shotRecordPath(shotDir)));
      QCOMPARE(shot["frames_written"].get<int>(), 9);
      QCOMPARE(shot["conditioned_on"].get<std::string>(), std::string(i == 0 ? "start_image" : "handoff"));
      const QImage frame(q(render::framePath(shotDir, 0).string()));
      QCOMPARE(frame.size(), QSize(64, 64));
    }
    const nlohmann::json report = nlohmann::json::parse(readFile(out / "report.json"));
    QVERIFY(report["completed"].get<bool>());
    QCOMPARE(report["shots"][0]["conditioned_on"].get<std::string>(), std::string("start_image"));
    QCOMPARE(report["cuts"].size(), std::size_t{2});
    for (const nlohmann::json& cut : report["cuts"]) {
      QCOMPARE(cut["handoff_mse"].get<double>(), 0.0);
      QCOMPARE(cut["handoff_bytes_copied"].get<std::uint64_t>(), std::uint64_t{0});
    }
    QProcess probe;
    probe.start("ffprobe", {"-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=nb_read_frames", "-of", "json", q((out / "sequence.mp4").string())});
    if (!probe.waitForStarted(5000)) QSKIP("ffprobe is not installed");
    QVERIFY(probe.waitForFinished(60000));
    const nlohmann::json streams = nlohmann::json::parse(probe.readAllStandardOutput().toStdString());
    QCOMPARE(std::stoi(streams["streams"][0]["nb_read_frames"].get<std::string>()), 27);
  }

  void theWorkflowsTi2vSequenceValidates() {
    const fs::path file = fs::path(SHOTCHAIN_SOURCE_DIR) / "workflows" / "wan22_ti2v_5b_three_shots.json";
    const CliRun run = runCli({"validate", q(file.string())});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
  }
};

SHOTCHAIN_TEST(RenderTi2vCli, Core)
#include "test_render_ti2v_cli.moc"
