// A two-shot render on a tiny DiT quantised to a GGUF file in a ComfyUI models folder the test writes (the DiT in
// unet/, as QuantStack's files are placed): within a stated distance of the same render on the float DiT, and the
// plan's DiT bytes are what the loaded model holds (its blocks at their stored size).
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include "io/ggml_quantise.h"
#include "io/gguf_writer.h"
#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/gguf_tensor_types.h"
#include "models/wan/wan_family.h"
#include "models/wan/wan_model.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

class GgufRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<TinyModelSet> models_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  // The tiny DiT as a GGUF file of `type` in folder/unet/, its VAE and text encoder beside it as ComfyUI keeps them.
  void writeModelsFolder(const std::filesystem::path& folder, io::GgmlType type) const {
    for (const char* sub : {"unet", "vae", "text_encoders"}) std::filesystem::create_directories(folder / sub);
    const io::WeightSet dit = io::WeightSet::open(models_->dit);
    std::vector<io::GgufTensorPlan> plans;
    for (const io::WeightInfo& info : dit.weights())
      plans.push_back(
          {info.name, models::ggufTensorType(&models::wanDitFamily(), info.name, info.shape, type), info.shape});
    io::GgufWriter writer({{"general.architecture", "wan"}, {"config", dit.metadata().at("config")}}, plans);
    for (const io::GgufTensorPlan& plan : plans) {
      const at::Tensor values = dit.load(plan.name, at::kFloat).contiguous();
      writer.append(io::quantiseGgml({values.data_ptr<float>(), static_cast<std::size_t>(values.numel())}, plan.type));
    }
    std::ofstream(folder / "unet" / "wan_tiny_Q8_0.gguf", std::ios::binary) << writer.finish();
    std::filesystem::copy_file(models_->vae, folder / "vae" / "vae.safetensors");
    std::filesystem::copy_file(models_->textEncoder, folder / "text_encoders" / "umt5.safetensors");
  }

  Sequence twoShots(const ModelSet& model) const {
    Sequence s;
    s.settings.model = model;
    s.settings.sampler.steps = 3;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent)};
    s.shots[1].prompt = "a blue square moving left on a black background";
    return s;
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    return render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU)->latent;
  }

 private Q_SLOTS:
  void initTestCase() {
    ::setenv("SHOTCHAIN_CACHE_DIR", (root() / "cache").c_str(), 1);
    runtime::initTorchRuntime();
    models_ = writeTinyModelSet(root() / "models", 23, false);
    writeModelsFolder(root() / "comfy-models", io::GgmlType::Q8_0);
  }

  void aQuantisedDitRendersCloseToTheFloatOne() {
    ModelSet quantised;
    quantised.builtin.clear();
    quantised.folder = (root() / "comfy-models").string();
    quantised.tokenizer = models_->tokenizer.string();
    const Sequence floatRun = twoShots(models_->modelSet()), ggufRun = twoShots(quantised);

    render::Renderer renderer;
    const memory::MemoryPlan plan = renderer.plan(ggufRun, tinyRenderOptions(root(), "gguf.render"));
    const io::WeightSet file = io::WeightSet::open(root() / "comfy-models" / "unet" / "wan_tiny_Q8_0.gguf");
    const at::ScalarType compute = io::matmulLoadDtype(file.find(models::kWanMatmulProbe), true);
    QCOMPARE(compute, at::kBFloat16);
    models::WanLoadOptions asPlanned{compute};
    asPlanned.keepQuantised = true;
    const models::WanModel loaded = models::WanModel::load(file, asPlanned);
    QCOMPARE(plan.ditWeights, loaded.weightBytes());
    QVERIFY(file.ggmlBlockBytes() > 0);

    render::RenderObserver quiet;
    QVERIFY(renderer.render(floatRun, tinyRenderOptions(root(), "float.render"), quiet).finished.completed);
    render::Renderer other;
    const render::RenderSummary gguf = other.render(ggufRun, tinyRenderOptions(root(), "gguf.render"), quiet);
    QVERIFY(gguf.finished.completed);
    QCOMPARE(gguf.finished.shotsRendered, 2);
    for (const auto& [index, id] : std::vector<std::pair<int, std::string>>{{0, "a"}, {1, "b"}}) {
      const at::Tensor a = tail("gguf.render", index, id), b = tail("float.render", index, id);
      const double error = ((a - b).norm() / b.norm()).item<double>();
      std::printf("  shot %s: Q8_0 DiT (%s compute) against the float32 DiT: rel L2 %.3g of its last latent\n",
                  id.c_str(), c10::toString(compute), error);
      QVERIFY2(error < 0.05, id.c_str());
      QVERIFY(error > 0);  // a different model really ran
    }
  }
};

SHOTCHAIN_TEST(GgufRenderTest, Core)
#include "test_gguf_render.moc"
