// Keyframes through the real renderer on the tiny Wan 2.2 I2V experts (golden §9.5): a shot that starts and
// ends on pictures, a shot continued by Stable Video Infinity (the previous shot's last latent in its image
// condition, handed over as it is), a shot continuing the handed latent that ends on a picture; how close
// each lands on its keyframes in the report and shot.json; what a model that cannot take them refuses.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "export_test_frames.h"
#include "io/safetensors_writer.h"
#include "models/umt5/umt5.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "resolve/plan_request.h"
#include "resolve/resolve_sequence.h"
#include "runtime/torch_runtime.h"
#include "test_bmp.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;

class KeyframesRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root() const { return dir_.path().toStdString(); }
  TinyModelSet set_;

  // The chain from a ComfyUI-style models folder the test writes: the two experts in diffusion_models/, the VAE
  // and the text encoder in theirs.
  Sequence chain(const char* low = "wan22_i2v_low_tiny.safetensors",
                 const char* high = "wan22_i2v_high_tiny.safetensors") const {
    const fs::path models = root() / "models";
    for (const char* sub : {"diffusion_models", "vae", "text_encoders"}) fs::create_directories(models / sub);
    const auto copy = [](const fs::path& from, const fs::path& to) {
      fs::copy_file(from, to, fs::copy_options::skip_existing);
    };
    copy(golden(low), models / "diffusion_models" / low);
    copy(golden(high), models / "diffusion_models" / high);
    copy(set_.vae, models / "vae" / "wan_2.1_vae.safetensors");
    copy(set_.textEncoder, models / "text_encoders" / "umt5.safetensors");
    Sequence s;
    s.settings.model = set_.modelSet();
    s.settings.model.folder = "models";
    s.settings.model.dit = std::string("diffusion_models/") + low;
    s.settings.model.ditHighNoise = std::string("diffusion_models/") + high;
    s.settings.model.vae.clear();
    s.settings.model.textEncoder.clear();
    s.settings.sampler.steps = 4;
    s.settings.sampler.guidance = 3.0;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Svi, 64),
               tinyShot("c", 3, ContinuityMode::Latent, 64)};
    s.shots[0].startImage = "start.bmp";
    s.shots[0].endImage = "key.bmp";
    s.shots[2].endImage = "final.bmp";
    return s;
  }

  // Every picture is its own: the file name picks the pattern.
  static render::RgbFrame picture(const fs::path& file) {
    const std::string name = file.filename().string();
    return syntheticFrame(64, 64, name == "start.bmp" ? 3 : name == "key.bmp" ? 5 : 7);
  }

  render::RenderSummary render(const Sequence& s, const std::string& out) const {
    render::RenderOptions options;
    options.outputDirectory = root() / out;
    options.sequenceDirectory = root();
    options.framesOnDisk = false;
    options.loadImage = &picture;
    render::Renderer renderer;
    render::RenderObserver none;
    return renderer.render(s, options, none);
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU);
    return t ? t->latent : at::Tensor();
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    set_ = writeTinyModelSet(root() / "raw", 41);
    for (const char* name : {"start.bmp", "key.bmp", "final.bmp"}) writeFile(root() / name, bmpOf(picture(name)));
  }

  void aThreeShotKeyframeChain() {
    const Sequence s = chain();
    const render::RenderSummary summary = render(s, "chain");
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.shots.size(), std::size_t{3});

    // 1: from its start picture to its end picture; both landings measured.
    const render::ShotFinished& first = summary.shots[0];
    QCOMPARE(first.conditionedOn, std::string("start_image"));
    QCOMPARE(first.keyframes.size(), std::size_t{2});
    QCOMPARE(first.keyframes[0].end, std::string("start"));
    QCOMPARE(first.keyframes[1].end, std::string("end"));
    for (const continuity::KeyframeLanding& l : first.keyframes)
      QVERIFY(std::isfinite(l.ssim) && l.deltaE >= 0 && l.missed == (l.ssim < 0.6 || l.deltaE > 10.0));

    // 2: SVI: the anchor (shot 1's start picture) and shot 1's last latent in y, nothing decoded or encoded from
    // shot 1, nothing copied out of the ring buffer; its first latent frame's worth of frames left out.
    const render::ShotFinished& svi = summary.shots[1];
    QCOMPARE(svi.conditionedOn, std::string("svi"));
    QCOMPARE(svi.experts->imageCondition, std::string("svi"));
    QCOMPARE(svi.framesWritten, 9 - 4);
    QVERIFY(svi.keyframes.empty());
    const continuity::CutMetrics& cut = summary.cuts.at(0);
    QCOMPARE(cut.toIndex, 1);
    QCOMPARE(cut.handoffBytesCopied, std::uint64_t{0});
    QVERIFY(cut.handoffMse && *cut.handoffMse == 0.0);

    // 3: the handed latent starts it, its end picture ends it.
    const render::ShotFinished& last = summary.shots[2];
    QCOMPARE(last.conditionedOn, std::string("handed_latent"));
    QCOMPARE(last.keyframes.size(), std::size_t{1});
    QCOMPARE(last.keyframes[0].end, std::string("end"));

    // shot.json and report.json keep the landings.
    const auto record = render::readShotRecord(render::shotDirectory(root() / "chain", 0, "a"));
    QVERIFY(record);
    QCOMPARE(record->keyframes.size(), std::size_t{2});
    QCOMPARE(record->keyframes[1].ssim, first.keyframes[1].ssim);
    QCOMPARE(record->framesDropped, 0);
    QCOMPARE(render::readShotRecord(render::shotDirectory(root() / "chain", 1, "b"))->framesDropped, 4);
    std::ifstream reportFile(root() / "chain" / "report.json");
    const nlohmann::json report = nlohmann::json::parse(reportFile);
    QCOMPARE(report["shots"][0]["keyframes"].size(), std::size_t{2});
    QCOMPARE(report["shots"][0]["resolved"]["end_image"].get<std::string>(), (root() / "key.bmp").string());
    QCOMPARE(report["shots"][1]["resolved"]["svi"]["motion_latents"].get<int>(), 1);

    // The pictures are what the shots are conditioned on: another end picture, another shot 1; another anchor,
    // another shot 2 from the same handed latent.
    Sequence otherEnd = s;
    otherEnd.shots[0].endImage = "final.bmp";
    otherEnd.shots.resize(1);
    QVERIFY(render(otherEnd, "other-end").finished.completed);
    QVERIFY(!at::equal(tail("chain", 0, "a"), tail("other-end", 0, "a")));
    Sequence otherAnchor = s;
    otherAnchor.shots[1].continuity.anchorImage = "final.bmp";
    otherAnchor.shots.resize(2);
    QVERIFY(render(otherAnchor, "other-anchor").finished.completed);
    QVERIFY(at::equal(tail("chain", 0, "a"), tail("other-anchor", 0, "a")));
    QVERIFY(!at::equal(tail("chain", 1, "b"), tail("other-anchor", 1, "b")));
  }

  void aSharedKeyframeIsOnePicture() {
    Sequence s = chain();
    s.shots[1].continuity.mode = ContinuityMode::None;
    s.shots[1].startImage = "key.bmp";  // the end of shot 1
    s.shots.resize(2);
    const resolve::ResolvedSequence resolved = resolve::resolveSequence(s, {root()});
    QVERIFY(resolved.ok());
    QVERIFY(resolved.shots[1].sharedStartKeyframe);
    QVERIFY(!resolved.shots[0].sharedStartKeyframe);
    const render::RenderSummary summary = render(s, "shared");
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.shots[1].keyframes.size(), std::size_t{1});
    QCOMPARE(summary.shots[1].keyframes[0].end, std::string("start"));
  }

  // Wan 2.1 I2V and FLF2V: the CLIP vision features of the shot's pictures reach the DiT (golden §11's tiny DiTs and
  // 224-pixel tower, a text encoder of their width); a continuing shot gives CLIP the previous shot's last frame.
  void clipImageToVideoRenders() {
    models::Umt5Config text = models::Umt5Config::preset("tiny");
    text.dim = 32;
    io::saveSafetensors(root() / "text32.safetensors", models::Umt5Encoder::random(text, 5).namedParameters());
    Sequence s;
    s.settings.model.builtin.clear();
    s.settings.model.dit = golden("wan21_i2v_tiny.safetensors").string();
    s.settings.model.vae = set_.vae.string();
    s.settings.model.textEncoder = (root() / "text32.safetensors").string();
    s.settings.model.tokenizer = set_.tokenizer.string();
    s.settings.sampler.steps = 3;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Latent, 64)};
    s.shots[0].startImage = "start.bmp";

    const resolve::ResolvedSequence unnamed = resolve::resolveSequence(s, {root()});
    QVERIFY(!unnamed.ok());
    QCOMPARE(unnamed.problems.front().path, std::string("model.image_encoder"));

    s.settings.model.imageEncoder = golden("clip_vision_loop_tiny.safetensors").string();
    // The plan counts the tower (not more than its file) and its pictures' activations.
    const memory::PlanRequest request = resolve::planRequest(resolve::resolveSequence(s, {root()}), s.settings, {});
    QVERIFY(request.imageEncoderWeights > 0 &&
            request.imageEncoderWeights <= fs::file_size(golden("clip_vision_loop_tiny.safetensors")));
    QVERIFY(request.imageEncoderActivations > 0);
    const render::RenderSummary i2v = render(s, "wan21-i2v");
    QVERIFY(i2v.finished.completed);
    QCOMPARE(i2v.shots[0].conditionedOn, std::string("start_image"));
    QCOMPARE(i2v.shots[1].conditionedOn, std::string("previous_last_frame"));

    Sequence flf = s;
    flf.settings.model.dit = golden("wan21_flf2v_tiny.safetensors").string();
    flf.shots.resize(1);
    flf.shots[0].endImage = "key.bmp";
    const render::RenderSummary both = render(flf, "wan21-flf2v");
    QVERIFY(both.finished.completed);
    QCOMPARE(both.shots[0].keyframes.size(), std::size_t{2});
    flf.shots[0].endImage = "final.bmp";  // the end picture reaches y and the image tokens: another shot
    QVERIFY(render(flf, "wan21-flf2v-other").finished.completed);
    QVERIFY(!at::equal(tail("wan21-flf2v", 0, "a"), tail("wan21-flf2v-other", 0, "a")));
  }

  // What the resolver refuses before any shot renders, naming the field.
  void whatCannotTakeKeyframesIsRefused() {
    Sequence t2v = chain("wan22_moe_low_tiny.safetensors", "wan22_moe_high_tiny.safetensors");
    t2v.shots[0].startImage.clear();
    t2v.shots.resize(2);
    const resolve::ResolvedSequence resolved = resolve::resolveSequence(t2v, {root()});
    auto errorAt = [&](const std::string& path) {
      for (const Diagnostic& d : resolved.problems)
        if (d.isError() && d.path == path) return true;
      return false;
    };
    QVERIFY(errorAt("shots[0].end_image"));
    QVERIFY(errorAt("shots[1].continuity.mode"));

    Sequence sviEnd = chain();
    sviEnd.shots[1].endImage = "final.bmp";
    const resolve::ResolvedSequence refused = resolve::resolveSequence(sviEnd, {root()});
    QVERIFY(!refused.ok());
    QCOMPARE(refused.problems.front().path, std::string("shots[1].end_image"));
    try {
      render(sviEnd, "refused");
      QFAIL("an svi shot with an end picture rendered");
    } catch (const render::RenderError& error) {
      QCOMPARE(error.field(), std::string("shots[1].end_image"));
    }
    QVERIFY(!fs::exists(root() / "refused" / "shots"));
  }
};

SHOTCHAIN_TEST(KeyframesRenderTest, Core)
#include "test_keyframes_render.moc"
