// LoRAs per shot through the real renderer on a tiny random Wan model: each shot renders as it
// would alone with its LoRAs, the DiT is loaded once and leaves the render as the base model, the
// figures are in the events and shot.json, a LoRA is part of the shot's key, a bad file is named.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "golden_model_facts.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/model_files.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_key.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

struct Collecting : render::RenderObserver {
  std::vector<render::RenderFailure> failures;
  void failed(const render::RenderFailure& f) override { failures.push_back(f); }
};

}  // namespace

class LoraRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<TinyModelSet> models_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  // A rank-2 LoRA on every self-attention projection of the tiny DiT, drawn from `seed`.
  void writeLora(const std::string& name, std::uint64_t seed) const {
    const io::WeightSet dit = io::WeightSet::open(models_->dit);
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(seed);
    io::NamedTensors tensors;
    for (const io::WeightInfo& w : dit.weights()) {
      if (w.name.find("self_attn.") == std::string::npos || !w.name.ends_with(".weight") || w.shape.size() != 2)
        continue;
      const std::string layer = "diffusion_model." + w.name.substr(0, w.name.size() - 7);
      const auto out = static_cast<std::int64_t>(w.shape[0]), in = static_cast<std::int64_t>(w.shape[1]);
      tensors.emplace_back(layer + ".lora_B.weight", at::randn({out, 2}, g) * 0.3);
      tensors.emplace_back(layer + ".lora_A.weight", at::randn({2, in}, g) * 0.3);
    }
    io::saveSafetensors(root() / name, tensors);
  }

  Sequence base(std::vector<Shot> shots) const {
    Sequence s;
    s.settings.model = models_->modelSet();
    s.settings.sampler.steps = 3;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = std::move(shots);
    return s;
  }

  render::RenderOptions options(const std::string& out) const { return tinyRenderOptions(root(), out); }

  // Renders `s` into `out` expecting it to stop on one failure: its message ("" when it finished or failed otherwise).
  std::string onlyFailure(const Sequence& s, const std::string& out) const {
    render::Renderer renderer;
    Collecting observer;
    const render::RenderSummary summary = renderer.render(s, options(out), observer);
    return !summary.finished.completed && observer.failures.size() == 1 ? observer.failures[0].message : "";
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU);
    QTEST_ASSERT(t.has_value());
    return t->latent;
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    models_ = writeTinyModelSet(root() / "wan", 21, false);
    writeLora("style.safetensors", 1);
    writeLora("other.safetensors", 2);
  }

  void documentRoundTripsAndValidates() {
    Sequence s = base({tinyShot("a", 1), tinyShot("b", 2)});
    QVERIFY(serializeSequence(s).find("loras") == std::string::npos);
    s.settings.loras = {{"style.safetensors", 0.8, {}}};
    s.shots[1].loras = std::vector<LoraRef>{};
    const LoadResult back = parseSequence(serializeSequence(s));
    QVERIFY2(back.ok(), formatAll(back.diagnostics).c_str());
    QVERIFY(*back.sequence == s);
    s.shots[0].loras = std::vector<LoraRef>{{"", 12.0, {}}};
    const QString all = q(formatAll(parseSequence(serializeSequence(s)).diagnostics));
    QVERIFY2(all.contains("shots[0].loras[0].file: must name a LoRA file"), qPrintable(all));
    QVERIFY2(all.contains("shots[0].loras[0].strength: 12 is outside -10..10"), qPrintable(all));
    QVERIFY2(!parseSequence(R"({"schema": "shotchain.sequence/1", "shots": [], "loras": {"file": "x"}})").ok(),
             "an object is not a list");
  }

  void eachShotRendersAsItWouldAloneWithItsLoras() {
    Sequence chain = base({tinyShot("a", 1), tinyShot("b", 2), tinyShot("c", 3)});
    chain.settings.loras = {{"style.safetensors", 1.0, {}}};
    chain.shots[1].loras = std::vector<LoraRef>{{"other.safetensors", 0.7, {}}, {"style.safetensors", 0.5, {}}};
    chain.shots[2].loras = std::vector<LoraRef>{};
    render::Renderer renderer;
    Collecting observer;
    const render::RenderSummary summary = renderer.render(chain, options("chain.render"), observer);
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.ditLoads, 0);  // pinned: loaded once before the shots, never reloaded
    QVERIFY(summary.shots[0].loras && summary.shots[1].loras);
    QVERIFY(!summary.shots[2].loras);
    QCOMPARE(summary.shots[1].loras->files, (std::vector<std::string>{"other.safetensors", "style.safetensors"}));
    QVERIFY(summary.shots[1].loras->bytesWritten > 0);
    QCOMPARE(summary.shots[1].loras->bytesKept, summary.shots[0].loras->bytesKept);  // the same weights touched
    const auto record = render::readShotRecord(render::shotDirectory(root() / "chain.render", 1, "b"));
    QVERIFY(record && record->loras && record->loras->strengths == (std::vector<double>{0.7, 0.5}));

    for (int i = 0; i < 3; ++i) {
      Sequence alone = base({chain.shots[static_cast<std::size_t>(i)]});
      alone.settings.loras = chain.settings.loras;
      const std::string out = "alone" + std::to_string(i) + ".render";
      render::Renderer fresh;
      QVERIFY(fresh.render(alone, options(out), observer).finished.completed);
      const std::string id = alone.shots[0].id;
      QVERIFY2(at::equal(tail("chain.render", i, id), tail(out, 0, id)), id.c_str());
    }
    // Offload moves the base weights (the LoRAs come off before the DiT leaves, go on when it is back).
    Sequence offloaded = chain;
    offloaded.settings.policy = ResidencyPolicy::Offload;
    render::Renderer other;
    QVERIFY(other.render(offloaded, options("offload.render"), observer).finished.completed);
    for (int i = 0; i < 3; ++i) {
      const std::string id = chain.shots[static_cast<std::size_t>(i)].id;
      QVERIFY2(at::equal(tail("chain.render", i, id), tail("offload.render", i, id)), id.c_str());
    }
    // The LoRAs changed the picture.
    Sequence plain = base({tinyShot("a", 1)});
    QVERIFY(renderer.render(plain, options("plain.render"), observer)
                .finished.completed);  // the same renderer, its DiT kept
    QVERIFY(!at::equal(tail("plain.render", 0, "a"), tail("chain.render", 0, "a")));
    render::Renderer fresh;
    QVERIFY(fresh.render(plain, options("fresh.render"), observer).finished.completed);
    QVERIFY(at::equal(tail("plain.render", 0, "a"), tail("fresh.render", 0, "a")));  // it left as the base model
  }

  // Two LoRAs of one file name in two folders are two LoRAs: the second shot gets its own file's patch, as alone.
  void loraFilesOfOneNameInTwoFoldersStayApart() {
    std::filesystem::create_directories(root() / "a");
    std::filesystem::create_directories(root() / "b");
    writeLora("a/style.safetensors", 3);
    writeLora("b/style.safetensors", 4);
    Sequence chain = base({tinyShot("a", 1), tinyShot("b", 1)});
    chain.shots[0].loras = std::vector<LoraRef>{{"a/style.safetensors", 1.0, {}}};
    chain.shots[1].loras = std::vector<LoraRef>{{"b/style.safetensors", 1.0, {}}};
    render::Renderer renderer;
    Collecting observer;
    QVERIFY(renderer.render(chain, options("names.render"), observer).finished.completed);
    Sequence alone = base({chain.shots[1]});
    render::Renderer fresh;
    QVERIFY(fresh.render(alone, options("names-alone.render"), observer).finished.completed);
    QVERIFY(at::equal(tail("names.render", 1, "b"), tail("names-alone.render", 0, "b")));
    QVERIFY(!at::equal(tail("names.render", 0, "a"), tail("names.render", 1, "b")));  // the same seed, another LoRA
  }

  // Copies `from`'s bytes over `to` in place (the same inode and size) and puts `to`'s modification time back:
  // a file retrained or replaced under the same name that nothing but its bytes tells apart.
  static void overwriteInPlace(const std::filesystem::path& from, const std::filesystem::path& to) {
    struct stat before {};
    QVERIFY(::stat(to.c_str(), &before) == 0);
    QCOMPARE(std::filesystem::file_size(from), std::filesystem::file_size(to));
    {
      std::ifstream in(from, std::ios::binary);
      std::fstream out(to, std::ios::binary | std::ios::in | std::ios::out);
      out << in.rdbuf();
    }
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    QVERIFY(::utimensat(AT_FDCWD, to.c_str(), times, 0) == 0);
  }

  // Renders `s` with re-use of what is on disk (a resume) through `renderer`: whether its one shot was re-used.
  bool reusedOnly(render::Renderer& renderer, const Sequence& s, const std::string& out) const {
    render::RenderOptions o = options(out);
    o.reuse = true;
    Collecting observer;
    const render::RenderSummary summary = renderer.render(s, o, observer);
    QTEST_ASSERT(summary.finished.completed && summary.shots.size() == 1);
    return summary.shots[0].reused;
  }

  // A LoRA retrained at the same rank and a DiT replaced in place keep their names, sizes and modification
  // times: a resume renders their shots again, with the new bytes (as a fresh render does), in the same renderer.
  void filesRewrittenInPlaceAreRenderedAgain() {
    writeLora("inplace.safetensors", 5);
    writeLora("retrained.safetensors", 6);
    Sequence s = base({tinyShot("a", 1)});
    s.shots[0].loras = std::vector<LoraRef>{{"inplace.safetensors", 1.0, {}}};
    render::Renderer renderer;
    QVERIFY(!reusedOnly(renderer, s, "inplace.render"));
    QVERIFY(reusedOnly(renderer, s, "inplace.render"));
    const at::Tensor old = tail("inplace.render", 0, "a");
    overwriteInPlace(root() / "retrained.safetensors", root() / "inplace.safetensors");
    QVERIFY(!reusedOnly(renderer, s, "inplace.render"));
    render::Renderer fresh;
    QVERIFY(!reusedOnly(fresh, s, "inplace-fresh.render"));
    QVERIFY(!at::equal(tail("inplace.render", 0, "a"), old));
    QVERIFY(at::equal(tail("inplace.render", 0, "a"), tail("inplace-fresh.render", 0, "a")));

    const TinyModelSet other = writeTinyModelSet(root() / "wan-other", 22, false);
    const TinyModelSet own = writeTinyModelSet(root() / "wan-own", 21, false);
    Sequence plain = base({tinyShot("a", 1)});
    plain.settings.model = own.modelSet();
    QVERIFY(!reusedOnly(renderer, plain, "dit.render"));
    const at::Tensor before = tail("dit.render", 0, "a");
    overwriteInPlace(other.dit, own.dit);
    QVERIFY(!reusedOnly(renderer, plain, "dit.render"));  // and the renderer loaded the new DiT
    QVERIFY(!at::equal(tail("dit.render", 0, "a"), before));
    render::Renderer third;
    QVERIFY(!reusedOnly(third, plain, "dit-fresh.render"));
    QVERIFY(at::equal(tail("dit.render", 0, "a"), tail("dit-fresh.render", 0, "a")));
  }

  void aLoraIsPartOfTheKey() {
    Sequence s = base({tinyShot("a", 1)});
    const auto plain = testing::shotKeysOf(s, root());
    s.settings.loras = {{"style.safetensors", 1.0, {}}};
    const auto with = testing::shotKeysOf(s, root());
    s.settings.loras[0].strength = 0.9;
    QVERIFY(with != plain);
    QVERIFY(testing::shotKeysOf(s, root()) != with);
  }

  void aMissingLoraIsRefusedBeforeAnyWork() {
    Sequence s = base({tinyShot("a", 1)});
    s.shots[0].loras = std::vector<LoraRef>{{"style.safetensors", 1.0, {}}, {"gone.safetensors", 1.0, {}}};
    render::Renderer renderer;
    Collecting observer;
    try {
      (void)renderer.render(s, options("missing.render"), observer);
      QFAIL("rendered");
    } catch (const render::RenderError& error) {
      QCOMPARE(error.field(), std::string("shots[0].loras[1].file"));
      QVERIFY2(std::string(error.what()).find("gone.safetensors: does not exist") != std::string::npos, error.what());
    }
  }

  void aBadLoraIsNamed() {
    io::NamedTensors tensors;
    tensors.emplace_back("diffusion_model.double_blocks.0.img_attn.qkv.lora_up.weight", at::ones({4, 2}));
    io::saveSafetensors(root() / "flux.safetensors", tensors);
    Sequence s = base({tinyShot("a", 1)});
    s.settings.loras = {{"flux.safetensors", 1.0, {}}};
    const std::string message = onlyFailure(s, "bad.render");
    QVERIFY2(
        message.find("flux.safetensors") != std::string::npos && message.find("matches no weight") != std::string::npos,
        message.c_str());
  }

  // A LoRA of finite values too large for the weights (on the demo DiT, whose forward they overflow): the first
  // step whose sample is not finite stops the shot, its failure names the step and what was applied, and nothing
  // of it is written (no record to resume from).
  void aSampleThatGoesBadStopsTheShot() {
    Sequence s;  // builtin:demo
    s.settings.sampler.steps = 3;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::None, 64)};
    const io::WeightSet dit = io::WeightSet::open(models::builtinModelDirectory("demo") / "dit.safetensors");
    io::NamedTensors tensors;
    for (const io::WeightInfo& w : dit.weights())
      if (w.name.find("self_attn.q.weight") != std::string::npos) {
        const std::string layer = "diffusion_model." + w.name.substr(0, w.name.size() - 7);
        const auto out = static_cast<std::int64_t>(w.shape[0]), in = static_cast<std::int64_t>(w.shape[1]);
        tensors.emplace_back(layer + ".lora_B.weight", at::full({out, 1}, 1e30));
        tensors.emplace_back(layer + ".lora_A.weight", at::full({1, in}, 1e30));
      }
    io::saveSafetensors(root() / "huge.safetensors", tensors);
    s.shots[1].loras = std::vector<LoraRef>{{"huge.safetensors", 1.0, {}}};
    const std::string message = onlyFailure(s, "poisoned.render");
    QVERIFY2(message.find("shot 2 (b): step 1 of 3 left values in the sample that are not finite") != std::string::npos,
             message.c_str());
    QVERIFY2(message.find("applied: LoRA huge.safetensors at 1, guidance") != std::string::npos, message.c_str());
    QVERIFY(render::readShotRecord(render::shotDirectory(root() / "poisoned.render", 0, "a")).has_value());
    QVERIFY(!render::readShotRecord(render::shotDirectory(root() / "poisoned.render", 1, "b")).has_value());
  }
};

SHOTCHAIN_TEST(LoraRenderTest, Core)
#include "test_lora_render.moc"
