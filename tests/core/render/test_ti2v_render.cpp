// Wan 2.2 TI2V through the real renderer and loaders, from a ComfyUI-style models folder the test writes
// (tiny random TI2V DiT, tiny Wan 2.2 VAE, and a Wan 2.1 VAE beside it that the folder resolution must pass
// over): shot 1 starts from a picture, shots 2–4 continue it. The held first latents stay bit-identical
// through sampling and nothing is copied at the cuts.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>

#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/wan/wan_vae.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "render/start_image.h"
#include "runtime/torch_runtime.h"
#include "test_bmp.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;

namespace {

struct Collecting : render::RenderObserver {
  std::vector<continuity::CutMetrics> cuts;
  void cutMeasured(const continuity::CutMetrics& c) override { cuts.push_back(c); }
};

// A 48×40 picture (not the shot's 64×64: it is resized to cover and centre-cropped).
render::RgbFrame picture() {
  render::RgbFrame frame;
  frame.width = 48;
  frame.height = 40;
  for (int y = 0; y < frame.height; ++y)
    for (int x = 0; x < frame.width; ++x)
      for (int c = 0; c < 3; ++c) frame.rgb.push_back(static_cast<std::uint8_t>((x * 5 + y * 3 + c * 80) % 256));
  return frame;
}

}  // namespace

class Ti2vRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root() const { return dir_.path().toStdString(); }

  at::Tensor tail(int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / "out", index, id), at::kCPU);
    return t ? t->latent : at::Tensor();
  }

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void chainFromAStartImage() {
    const TinyModelSet set = writeTinyModelSet(root() / "raw", 31, false, 0, true);
    const fs::path models = root() / "models";
    for (const char* sub : {"diffusion_models", "vae", "text_encoders"}) fs::create_directories(models / sub);
    fs::copy_file(set.dit, models / "diffusion_models" / "wan2.2_ti2v_tiny.safetensors");
    fs::copy_file(set.vae, models / "vae" / "wan2.2_vae.safetensors");
    fs::copy_file(golden("wan_vae_tiny.safetensors"), models / "vae" / "wan_2.1_vae.safetensors");
    fs::copy_file(set.textEncoder, models / "text_encoders" / "umt5.safetensors");
    writeFile(root() / "start.bmp", bmpOf(picture()));

    Sequence s;
    s.settings.model.builtin.clear();
    s.settings.model.folder = models.string();
    s.settings.model.tokenizer = set.tokenizer.string();
    s.settings.fps = 24;
    s.settings.sampler.steps = 3;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Latent, 64),
               tinyShot("c", 3, ContinuityMode::Latent, 64), tinyShot("d", 4, ContinuityMode::VaeRoundtrip, 64)};
    s.shots[0].startImage = "start.bmp";
    render::RenderOptions options;
    options.outputDirectory = root() / "out";
    options.sequenceDirectory = root();
    options.framesOnDisk = false;
    options.loadImage = [](const fs::path&) { return picture(); };  // the CLI's reader decodes start.bmp (e2e test)

    render::Renderer renderer;
    Collecting observer;
    const render::RenderSummary summary = renderer.render(s, options, observer);
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.shots.size(), std::size_t{4});
    QCOMPARE(summary.shots[0].conditionedOn, std::string("start_image"));
    QCOMPARE(summary.shots[1].conditionedOn, std::string("handoff"));
    QCOMPARE(summary.shots[3].conditionedOn, std::string("last_frame_encode"));
    bool noted = false;
    for (const std::string& note : summary.plan.notes) noted = noted || note.find("Wan 2.2 TI2V") != std::string::npos;
    QVERIFY(noted);

    // Shot 1's first latent is the picture's encoding (as i2v() prepares it), bit for bit after every step.
    const models::WanVae vae = models::WanVae::load(io::WeightSet::open(models / "vae" / "wan2.2_vae.safetensors"));
    const at::Tensor image = vae.encode(render::startImageTensor(picture(), 64, 64).unsqueeze(1));
    const at::Tensor a = tail(0, "a"), b = tail(1, "b"), c = tail(2, "c"), d = tail(3, "d");
    QCOMPARE(a.sizes(), (at::IntArrayRef{48, 3, 4, 4}));
    QVERIFY(at::equal(a.narrow(1, 0, 1), image));
    QVERIFY((a.narrow(1, 1, 2) - image).abs().max().item<double>() > 1e-3);  // the rest was generated
    // `latent`: the handed latent starts the next shot bit-identically; nothing copied, handoff MSE 0.
    QVERIFY(at::equal(b.narrow(1, 0, 1), a.narrow(1, 2, 1)));
    QVERIFY(at::equal(c.narrow(1, 0, 1), b.narrow(1, 2, 1)));
    QCOMPARE(observer.cuts.size(), std::size_t{3});
    for (int i = 0; i < 2; ++i) {
      QCOMPARE(observer.cuts[static_cast<std::size_t>(i)].handoffBytesCopied, std::uint64_t{0});
      QCOMPARE(*observer.cuts[static_cast<std::size_t>(i)].handoffMse, 0.0);
      QCOMPARE(observer.cuts[static_cast<std::size_t>(i)].source, std::string("handoff"));
    }
    // `vae_roundtrip`: one encode of c's last frame, held clean as TI2V holds a start image.
    QCOMPARE(observer.cuts[2].source, std::string("last_frame_encode"));
    QVERIFY(!at::equal(d.narrow(1, 0, 1), c.narrow(1, 2, 1)));
    QCOMPARE(d.size(1), std::int64_t{3});
    for (const render::ShotFinished& shot : summary.shots) QCOMPARE(shot.framesWritten, 9);
  }

  void aStartImageThatIsNotThereRefusesTheShot() {
    Sequence s;
    const TinyModelSet set = writeTinyModelSet(root() / "raw2", 32, false, 0, true);
    s.settings.model = set.modelSet();
    s.settings.sampler.steps = 2;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64)};
    s.shots[0].startImage = "missing.png";
    render::RenderOptions options;
    options.outputDirectory = root() / "out2";
    options.sequenceDirectory = root();
    options.framesOnDisk = false;
    options.loadImage = [](const fs::path& path) -> render::RgbFrame {
      throw std::runtime_error(path.string() + ": no such file");
    };
    render::Renderer renderer;
    Collecting observer;
    bool refused = false;
    try {
      (void)renderer.render(s, options, observer);
    } catch (const std::exception& error) {
      refused = std::string(error.what()).find("missing.png") != std::string::npos;
    }
    QVERIFY(refused);
  }
};

SHOTCHAIN_TEST(Ti2vRenderTest, Core)
#include "test_ti2v_render.moc"
