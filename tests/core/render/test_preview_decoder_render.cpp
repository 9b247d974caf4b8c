// A TAEHV preview decoder in the models folder's vae_approx/ (as ComfyUI finds lighttaew2_1): found by its keys
// when its latent channels fit the DiT, and during sampling the steps carry the whole shot decoded from their
// prediction, at the shot's size and frame count; the render's frames and latents are those of a render without it
// (it never touches the sampler's buffer), and report.json says how many previews it decoded and what they cost.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "models/model_catalogue.h"
#include "models/model_files.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

class StepFrames : public render::RenderObserver {
 public:
  void stepDone(const render::StepDone& step) override {
    ++steps;
    if (step.previewFrames.empty()) return;
    ++decoded;
    frames = step.previewFrames.size();
    width = step.previewFrames.front().width;
    height = step.previewFrames.front().height;
    seconds += step.previewSeconds;
  }
  int steps = 0, decoded = 0, width = 0, height = 0;
  std::size_t frames = 0;
  double seconds = 0;
};

}  // namespace

class PreviewDecoderRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<TinyModelSet> models_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }
  std::filesystem::path folder() const { return root() / "comfy-models"; }

  Sequence oneShot(bool withDecoder) const {
    Sequence s;
    s.settings.model.builtin.clear();
    s.settings.model.folder = (withDecoder ? folder() : root() / "plain-models").string();
    s.settings.model.tokenizer = models_->tokenizer.string();
    s.settings.sampler.steps = 4;
    s.shots = {tinyShot("a", 3)};
    return s;
  }

  at::Tensor tail(const std::string& out) const {
    return render::readShotTail(render::shotDirectory(root() / out, 0, "a"), at::kCPU)->latent;
  }

 private Q_SLOTS:
  void initTestCase() {
    ::setenv("SHOTCHAIN_CACHE_DIR", (root() / "cache").c_str(), 1);
    runtime::initTorchRuntime();
    models_ = writeTinyModelSet(root() / "models", 29, false);
    for (const std::filesystem::path& models : {folder(), root() / "plain-models"}) {
      for (const char* sub : {"diffusion_models", "vae", "text_encoders", "vae_approx"})
        std::filesystem::create_directories(models / sub);
      std::filesystem::copy_file(models_->dit, models / "diffusion_models" / "dit.safetensors");
      std::filesystem::copy_file(models_->vae, models / "vae" / "vae.safetensors");
      std::filesystem::copy_file(models_->textEncoder, models / "text_encoders" / "umt5.safetensors");
    }
    // A 48-channel decoder (Wan 2.2 5B's) does not fit this 16-channel DiT; the 16-channel one does.
    std::filesystem::copy_file(golden("taehv_tiny_wan22.safetensors"),
                               folder() / "vae_approx" / "lighttaew2_2.safetensors");
    std::filesystem::copy_file(golden("taehv_tiny_wan21.safetensors"), folder() / "vae_approx" / "taew2_1.safetensors");
  }

  void theDecoderIsFoundByItsChannels() {
    const models::ModelFiles files = models::resolveModelFiles(oneShot(true).settings.model, root());
    QCOMPARE(files.previewDecoder.filename().string(), std::string("taew2_1.safetensors"));
    QVERIFY(models::resolveModelFiles(oneShot(false).settings.model, root()).previewDecoder.empty());
  }

  // The models listing says what the file is; choosing it for the sequence changes nothing (no field names one).
  void theListingKnowsItAndNoFieldTakesIt() {
    const std::filesystem::path file = folder() / "vae_approx" / "taew2_1.safetensors";
    const models::CataloguedModel listed = models::catalogueModelFile(file);
    QCOMPARE(listed.id.role, models::ModelRole::PreviewDecoder);
    QCOMPARE(listed.id.family, std::string("taehv"));
    QVERIFY2(listed.problem.empty(), listed.problem.c_str());
    const ModelSet current = oneShot(true).settings.model;
    QVERIFY(models::chooseModelFile(current, models::ModelRole::PreviewDecoder, file, {folder()}) == current);
  }

  void stepsCarryTheWholeShotAndTheRenderIsUnchanged() {
    render::RenderOptions with = tinyRenderOptions(root(), "with.render");
    with.previews = true;
    StepFrames observed;
    render::Renderer renderer;
    QVERIFY(renderer.render(oneShot(true), with, observed).finished.completed);
    QCOMPARE(observed.steps, 4);
    QVERIFY(observed.decoded >= 1);
    QCOMPARE(observed.frames, std::size_t{9});  // 3 latent frames → 4·3 − 3, what the VAE decodes
    QCOMPARE(observed.width, 32);
    QCOMPARE(observed.height, 32);
    std::printf("  %d of %d steps decoded a preview, %.3f s each\n", observed.decoded, observed.steps,
                observed.seconds / observed.decoded);
    const nlohmann::json report = nlohmann::json::parse(readFile(root() / "with.render" / "report.json"));
    QCOMPARE(report["preview"]["decoder"].get<std::string>(), std::string("taew2_1.safetensors"));
    QCOMPARE(report["preview"]["decodes"].get<int>(), observed.decoded);
    QVERIFY(report["preview"]["seconds_each"].get<double>() > 0);

    render::RenderOptions without = tinyRenderOptions(root(), "without.render");
    without.previews = true;
    StepFrames none;
    render::Renderer plain;
    QVERIFY(plain.render(oneShot(false), without, none).finished.completed);
    QCOMPARE(none.decoded, 0);
    QVERIFY(at::equal(tail("with.render"), tail("without.render")));
  }
};

SHOTCHAIN_TEST(PreviewDecoderRenderTest, Core)
#include "test_preview_decoder_render.moc"
