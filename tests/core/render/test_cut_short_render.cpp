// A weights file cut short while a render reads it (a download restarted over it, a disk quota, a sync tool):
// the render stops with an error that names the file, never a SIGBUS, and the process's other renders go on.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "io/safetensors_writer.h"
#include "io/weight_set.h"
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

// Cuts `file` to half its size at the first step of shot `shot`.
struct CutsAFile : render::RenderObserver {
  std::filesystem::path file;
  int shot = 0;
  bool cut = false;
  std::vector<render::RenderFailure> failures;
  void stepDone(const render::StepDone& step) override {
    if (cut || step.shotIndex != shot) return;
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
    cut = true;
  }
  void failed(const render::RenderFailure& f) override { failures.push_back(f); }
};

}  // namespace

class CutShortRender : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  Sequence sequenceOn(const TinyModelSet& models, std::vector<Shot> shots) const {
    Sequence s;
    s.settings.model = models.modelSet();
    s.settings.sampler.steps = 3;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = std::move(shots);
    return s;
  }

  render::RenderOptions options(const std::string& out) const { return tinyRenderOptions(root(), out); }

  static QString failureOf(const render::RenderSummary& summary, const CutsAFile& observer) {
    if (summary.finished.completed || observer.failures.size() != 1) return {};
    return QString::fromStdString(observer.failures[0].message);
  }

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void aDitCutShortStopsTheRenderNamingIt() {
    const TinyModelSet cut = writeTinyModelSet(root() / "cut", 31, false);
    const TinyModelSet whole = writeTinyModelSet(root() / "whole", 32, false);
    render::Renderer renderer;
    CutsAFile observer;
    observer.file = cut.dit;
    const render::RenderSummary summary =
        renderer.render(sequenceOn(cut, {tinyShot("a", 1), tinyShot("b", 2)}), options("cut.render"), observer);
    QVERIFY(observer.cut);
    const QString failure = failureOf(summary, observer);
    QVERIFY2(failure.contains(QString::fromStdString(cut.dit.string()) + ": was cut short while in use (to "),
             qPrintable(failure));
    QVERIFY2(failure.contains("Put the whole file back"), qPrintable(failure));
    QVERIFY(!std::filesystem::exists(render::shotRecordPath(render::shotDirectory(root() / "cut.render", 0, "a"))));

    // The same renderer and a new one render another model set as if nothing had happened.
    CutsAFile none;
    none.shot = -1;
    const Sequence other = sequenceOn(whole, {tinyShot("a", 1)});
    QVERIFY(renderer.render(other, options("after.render"), none).finished.completed);
    render::Renderer fresh;
    QVERIFY(fresh.render(other, options("fresh.render"), none).finished.completed);
    const auto tail = [this](const std::string& out) {
      return render::readShotTail(render::shotDirectory(root() / out, 0, "a"), at::kCPU)->latent;
    };
    QVERIFY(at::equal(tail("after.render"), tail("fresh.render")));
  }

  void aLoraCutShortIsNamed() {
    const TinyModelSet models = writeTinyModelSet(root() / "lora-models", 33, false);
    const io::WeightSet dit = io::WeightSet::open(models.dit);
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(7);
    io::NamedTensors tensors;
    for (const io::WeightInfo& w : dit.weights())
      if (w.name.find("self_attn.") != std::string::npos && w.name.ends_with(".weight") && w.shape.size() == 2) {
        const std::string layer = "diffusion_model." + w.name.substr(0, w.name.size() - 7);
        tensors.emplace_back(layer + ".lora_B.weight", at::randn({static_cast<std::int64_t>(w.shape[0]), 2}, g));
        tensors.emplace_back(layer + ".lora_A.weight", at::randn({2, static_cast<std::int64_t>(w.shape[1])}, g));
      }
    io::saveSafetensors(root() / "style.safetensors", tensors);
    Sequence s = sequenceOn(models, {tinyShot("a", 1), tinyShot("b", 2)});
    s.shots[0].loras = std::vector<LoraRef>{{"style.safetensors", 1.0, {}}};
    s.shots[1].loras = std::vector<LoraRef>{{"style.safetensors", 0.5, {}}};
    render::Renderer renderer;
    CutsAFile observer;
    observer.file = root() / "style.safetensors";
    const render::RenderSummary summary = renderer.render(s, options("lora.render"), observer);
    QVERIFY(observer.cut);
    const QString failure = failureOf(summary, observer);
    QVERIFY2(failure.contains("shot 2 (b)") && failure.contains("style.safetensors"), qPrintable(failure));
  }
};

SHOTCHAIN_TEST(CutShortRender, Appless)
#include "test_cut_short_render.moc"
