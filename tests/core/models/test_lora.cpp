// LoRAs on the golden tiny DiT: the golden section 10 LoRA merges to the expected weights, every
// accepted key form gives the same merge, taking it off restores the base bit for bit, and a LoRA that
// does not fit is refused by file and key.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <optional>

#include <ATen/ATen.h>

#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/lora/lora_file.h"
#include "models/lora/lora_patcher.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "raw_pt.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::golden;

namespace {

const char* const kProjections[] = {"q", "k", "v", "o"};

// The golden LoRA's tensors by (block, projection): A [4, 64] and B [64, 4].
struct GoldenPair {
  std::string layer;  // "blocks.0.self_attn.q"
  at::Tensor a, b;
};

std::vector<GoldenPair> goldenPairs() {
  const io::WeightSet set = io::WeightSet::open(golden("lora_tiny.pt"));
  std::vector<GoldenPair> pairs;
  for (int block = 0; block < 2; ++block)
    for (const char* p : kProjections) {
      const std::string layer = "blocks." + std::to_string(block) + ".self_attn." + p;
      pairs.push_back({layer, set.load("base_model.model." + layer + ".lora_A.weight", at::kFloat),
                       set.load("base_model.model." + layer + ".lora_B.weight", at::kFloat)});
    }
  return pairs;
}

}  // namespace

class TestLora : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<WanModel> model_;
  std::optional<io::WeightSet> expected_;

  std::filesystem::path path(const std::string& name) const {
    return std::filesystem::path(dir_.path().toStdString()) / name;
  }

  WeightShapes shapes() const {
    WeightShapes out;
    for (const auto& [name, tensor] : model_->namedParameters()) out.emplace_back(name, tensor.sizes().vec());
    return out;
  }

  std::shared_ptr<const LoraFile> read(const std::filesystem::path& file) const {
    return std::make_shared<const LoraFile>(
        readLoraFile(file, shapes(), model_->family(), models::wanLoraLayerAliases()));
  }

  at::Tensor weight(const std::string& name) const {
    for (const auto& [n, t] : model_->namedParameters())
      if (n == name) return t;
    return {};
  }

  at::Tensor forward() const {
    const auto io = io::SafetensorsFile::open(golden("wan_dit_tiny_io.safetensors"));
    return model_->forward({io->tensor("case1.x")}, io->tensor("case1.t"), {io->tensor("case1.context")}).at(0);
  }

  // The merged weights equal the golden ones within float32 rounding; the other weights are untouched.
  void checkMerged(const std::string& what) const {
    for (int block = 0; block < 2; ++block)
      for (const char* p : kProjections) {
        const std::string name = "blocks." + std::to_string(block) + ".self_attn." + p + ".weight";
        const at::Tensor want = expected_->load(name, at::kFloat);
        const double err = (weight(name) - want).abs().max().item<double>();
        QVERIFY2(err <= 2e-7 * std::max(1.0, want.abs().max().item<double>()),
                 qPrintable(QString("%1 %2: %3").arg(what.c_str(), name.c_str()).arg(err)));
      }
  }

 private Q_SLOTS:
  void initTestCase() {
    const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
    model_.emplace(WanModel::load(weights, WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto}));
    expected_.emplace(io::WeightSet::open(golden("lora_tiny_expected_merged.pt")));
  }

  void goldenLoraMergesAndComesOff() {
    const at::Tensor base = forward();
    const at::Tensor baseQ = weight("blocks.0.self_attn.q.weight");
    const std::shared_ptr<const LoraFile> lora = read(golden("lora_tiny.pt"));
    QCOMPARE(lora->patches.size(), std::size_t{8});
    QCOMPARE(lora->rank, std::int64_t{4});
    QCOMPARE(lora->patches.front().scale, 2.0);  // lora_alpha 8 / rank 4, from the checkpoint's top level
    LoraPatcher patcher;
    const LoraPatchFigures figures = patcher.apply(*model_, {{lora, 1.0}});
    QCOMPARE(figures.weightsPatched, 8);
    QCOMPARE(figures.bytesWritten, std::uint64_t{8 * 64 * 64 * 4});
    QCOMPARE(figures.bytesKept, figures.bytesWritten);
    checkMerged("pt");

    // The DiT output of the merged weights: the same as a model given the golden merged weights.
    const at::Tensor patched = forward();
    QVERIFY((patched - base).abs().max().item<double>() > 1e-4);
    patcher.restore(*model_);
    model_->replaceParameters([&](const std::string& name, const at::Tensor& value) {
      return expected_->find(name) ? expected_->load(name, at::kFloat) : value;
    });
    const at::Tensor reference = forward();
    QVERIFY2((patched - reference).abs().max().item<double>() < 1e-5, "merged DiT output");
    // Back to the base weights (the golden file's, as loaded).
    const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
    model_->replaceParameters([&](const std::string& name, const at::Tensor& value) {
      return name.find("self_attn") != std::string::npos ? weights.load(name, at::kFloat) : value;
    });
    QVERIFY(at::equal(forward(), base));

    // Restore is the very tensor the model had: bit for bit, no copy.
    patcher.apply(*model_, {{lora, 0.5}});
    QVERIFY(!at::equal(weight("blocks.0.self_attn.q.weight"), baseQ));
    patcher.restore(*model_);
    QVERIFY(!patcher.patched());
    QVERIFY(at::equal(forward(), base));
  }

  void everyKeyFormMergesTheSame_data() {
    QTest::addColumn<QString>("form");
    for (const char* form : {"comfy", "kohya", "peft", "diffusers", "diffusers_lora_dot", "diff"})
      QTest::newRow(form) << QString(form);
  }

  void everyKeyFormMergesTheSame() {
    QFETCH(QString, form);
    io::NamedTensors tensors;
    for (const GoldenPair& p : goldenPairs()) {
      const std::string f = form.toStdString();
      std::string diffusers = p.layer;
      diffusers.replace(diffusers.find("self_attn."), 10, "attn1.");
      if (diffusers.ends_with(".o"))
        diffusers.replace(diffusers.size() - 1, 1, "to_out.0");
      else
        diffusers.insert(diffusers.size() - 1, "to_");
      std::string kohya = p.layer;
      for (char& c : kohya)
        if (c == '.') c = '_';
      if (f == "comfy") {
        tensors.emplace_back("diffusion_model." + p.layer + ".lora_up.weight", p.b);
        tensors.emplace_back("diffusion_model." + p.layer + ".lora_down.weight", p.a);
        tensors.emplace_back("diffusion_model." + p.layer + ".alpha", at::scalar_tensor(8.0f));
      } else if (f == "kohya") {
        tensors.emplace_back("lora_unet_" + kohya + ".lora_up.weight", p.b);
        tensors.emplace_back("lora_unet_" + kohya + ".lora_down.weight", p.a);
        tensors.emplace_back("lora_unet_" + kohya + ".alpha", at::scalar_tensor(8.0f));
      } else if (f == "peft") {  // LightX2V's form: no alpha, B pre-scaled
        tensors.emplace_back("diffusion_model." + p.layer + ".lora_B.weight", p.b * 2);
        tensors.emplace_back("diffusion_model." + p.layer + ".lora_A.weight", p.a);
      } else if (f == "diffusers") {
        tensors.emplace_back("transformer." + diffusers + ".lora_B.weight", p.b);
        tensors.emplace_back("transformer." + diffusers + ".lora_A.weight", p.a);
        tensors.emplace_back("transformer." + diffusers + ".alpha", at::scalar_tensor(8.0f));
      } else if (f == "diffusers_lora_dot") {
        tensors.emplace_back(diffusers + ".lora.up.weight", p.b);
        tensors.emplace_back(diffusers + ".lora.down.weight", p.a);
        tensors.emplace_back(diffusers + ".alpha", at::scalar_tensor(8.0f));
      } else {
        tensors.emplace_back("diffusion_model." + p.layer + ".diff", at::mm(p.b, p.a) * 2);
      }
    }
    const std::filesystem::path file = path(form.toStdString() + ".safetensors");
    io::saveSafetensors(file, tensors);
    LoraPatcher patcher;
    patcher.apply(*model_, {{read(file), 1.0}});
    checkMerged(form.toStdString());
    patcher.restore(*model_);
  }

  void twoLorasStackAndSwitch() {
    const std::shared_ptr<const LoraFile> lora = read(golden("lora_tiny.pt"));
    io::NamedTensors bias;
    bias.emplace_back("diffusion_model.blocks.1.ffn.2.diff_b", at::full({64}, 0.25f));
    io::saveSafetensors(path("bias.safetensors"), bias);
    const std::shared_ptr<const LoraFile> shift = read(path("bias.safetensors"));
    const at::Tensor biasBefore = weight("blocks.1.ffn.2.bias");
    LoraPatcher patcher;
    patcher.apply(*model_, {{lora, 1.0}, {shift, 2.0}});
    QVERIFY(at::allclose(weight("blocks.1.ffn.2.bias"), biasBefore + 0.5));
    checkMerged("stacked");
    // Switching to the bias LoRA alone: the attention weights come back as they were.
    const LoraPatchFigures switched = patcher.apply(*model_, {{shift, 2.0}});
    QCOMPARE(switched.weightsPatched, 1);
    QCOMPARE(switched.bytesWritten, std::uint64_t{0});  // the bias patch is unchanged
    for (const io::WeightInfo& info : expected_->weights())
      QVERIFY2(!at::equal(weight(info.name), expected_->load(info.name, at::kFloat)), info.name.c_str());
    patcher.restore(*model_);
    QVERIFY(at::equal(weight("blocks.1.ffn.2.bias"), biasBefore));
  }

  void badLorasNameTheFileAndKey_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("message");
    QTest::newRow("another model") << "diffusion_model.double_blocks.0.img_attn.qkv.lora_up.weight"
                                   << "matches no weight of the";
    QTest::newRow("not a lora key") << "diffusion_model.blocks.0.self_attn.q.weight"
                                    << "is not a LoRA key";
    QTest::newRow("half a pair") << "diffusion_model.blocks.0.self_attn.q.lora_up.weight"
                                 << "has no down (A) half";
    QTest::newRow("LoCon mid") << "diffusion_model.blocks.0.self_attn.q.lora_mid.weight"
                               << "does not apply";
    QTest::newRow("DoRA") << "diffusion_model.blocks.0.self_attn.q.dora_scale"
                          << "does not apply";
    QTest::newRow("wrong shape") << "diffusion_model.blocks.0.self_attn.q.diff"
                                 << "is not the shape of blocks.0.self_attn.q.weight";
    QTest::newRow("not finite") << "diffusion_model.blocks.0.ffn.2.diff_b"
                                << "not finite";
  }

  void badLorasNameTheFileAndKey() {
    QFETCH(QString, key);
    QFETCH(QString, message);
    io::NamedTensors tensors;
    const std::string k = key.toStdString();
    if (message == "not finite")
      tensors.emplace_back(k, at::full({64}, NAN));
    else if (k.ends_with(".diff"))
      tensors.emplace_back(k, at::ones({3, 3}));
    else if (k.ends_with(".diff_b"))
      tensors.emplace_back(k, at::ones({64}));
    else
      tensors.emplace_back(k, at::ones({64, 4}));
    io::saveSafetensors(path("bad.safetensors"), tensors);
    try {
      (void)read(path("bad.safetensors"));
      QFAIL("accepted");
    } catch (const LoraError& error) {
      const QString text = error.what();
      QVERIFY2(text.contains("bad.safetensors") && text.contains(key) && text.contains(message), qPrintable(text));
    }
  }

  // Alphas that would poison the weights or the figures: a tensor of no number, one past any trained size, a
  // checkpoint's lora_alpha that is not a number (once ignored without a word).
  void badAlphasAreRefused() {
    const std::string layer = "diffusion_model.blocks.0.self_attn.q";
    for (const auto& [alpha, message] : {std::pair{at::zeros({0}), "must hold one number, not [0]"},
                                         std::pair{at::full({1}, 1e300, at::kDouble), "not finite"},
                                         std::pair{at::full({1}, 1e7), "is outside -1e6..1e6"}}) {
      io::NamedTensors tensors{{layer + ".lora_up.weight", at::ones({64, 4})},
                               {layer + ".lora_down.weight", at::ones({4, 64})},
                               {layer + ".alpha", alpha}};
      io::saveSafetensors(path("alpha.safetensors"), tensors);
      try {
        (void)read(path("alpha.safetensors"));
        QFAIL(message);
      } catch (const LoraError& error) {
        QVERIFY2(QString(error.what()).contains("alpha.safetensors") && QString(error.what()).contains(message),
                 error.what());
      }
    }
    using namespace testing::pickle;
    const std::string zeros(64 * 4 * 4, '\0');
    const std::string inner = orderedDict() + "(" + str(layer + ".lora_up.weight") +
                              tensor("FloatStorage", "0", 256, 0, {64, 4}, {4, 1}) + str(layer + ".lora_down.weight") +
                              tensor("FloatStorage", "1", 256, 0, {4, 64}, {64, 1}) + "u";
    const std::string data = std::string("\x80\x02") + orderedDict() + "(" + str("generator_lora") + inner +
                             str("lora_alpha") + str("eight") + "u.";
    testing::writeFile(path("alpha.pt"), testing::ptArchive(data, {{"0", zeros}, {"1", zeros}}));
    try {
      (void)read(path("alpha.pt"));
      QFAIL("a lora_alpha of text was taken");
    } catch (const LoraError& error) {
      QVERIFY2(QString(error.what()).contains("alpha.pt: \"lora_alpha\": ") &&
                   QString(error.what()).contains("is not a number"),
               error.what());
    }
  }
};

SHOTCHAIN_TEST(TestLora, Core)
#include "test_lora.moc"
