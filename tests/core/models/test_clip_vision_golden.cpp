#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/clip_vit/clip_vision.h"
#include "models/model_catalogue.h"
#include "models/model_family.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::errorOf;
using shotchain::testing::golden;
using shotchain::testing::goldenMismatch;
using shotchain::testing::q;
using shotchain::testing::Tolerance;

namespace {

// Golden README §11: the tower's output (RMS ≈ 1.5) and the preprocessed pixels, float32.
constexpr Tolerance kOutput{2e-5, 1e-5};
constexpr Tolerance kPixels{2e-6, 1e-6};

}  // namespace

class TestClipVisionGolden : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> io_;
  nlohmann::json config_;
  std::optional<io::WeightSet> weights_;
  QTemporaryDir dir_;

  void check(const std::string& what, const at::Tensor& got, const at::Tensor& expected, Tolerance tolerance) {
    const std::string problem = goldenMismatch(what, got, expected, tolerance);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  // The golden weights with `edit` applied to the (name, tensor) list, saved under `name`.
  io::WeightSet edited(const std::string& name, const std::function<void(io::NamedTensors&)>& edit) {
    const auto file = io::SafetensorsFile::open(golden("clip_vision_tiny.safetensors"));
    io::NamedTensors tensors;
    for (const auto& entry : file->header().tensors) tensors.emplace_back(entry.name, file->tensor(entry));
    edit(tensors);
    const std::filesystem::path path = dir_.filePath(q(name)).toStdString();
    io::saveSafetensors(path, tensors, file->header().metadata);
    return io::WeightSet::open(path);
  }

 private Q_SLOTS:
  void initTestCase() {
    for (const char* name :
         {"clip_vision_tiny.safetensors", "clip_vision_tiny_hf.safetensors", "clip_vision_tiny_io.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(q(golden(name).string()))));
    io_ = io::SafetensorsFile::open(golden("clip_vision_tiny_io.safetensors"));
    config_ = nlohmann::json::parse(io_->header().metadata.at("config"));
    weights_.emplace(io::WeightSet::open(golden("clip_vision_tiny.safetensors")));
  }

  // Every value of the tiny tower comes from the file: shapes, and the head count from its metadata.
  void detectsBothNamings() {
    for (const char* name : {"clip_vision_tiny.safetensors", "clip_vision_tiny_hf.safetensors"}) {
      const io::WeightSet weights = io::WeightSet::open(golden(name));
      const ClipVisionDetection d = detectClipVisionConfig(weights);
      QVERIFY2(d.problems.empty(), d.problems.empty() ? "" : d.problems.front().c_str());
      QVERIFY(d.isClipVision);
      QCOMPARE(d.config.dim, config_["dim"].get<std::int64_t>());
      QCOMPARE(d.config.numLayers, config_["num_layers"].get<std::int64_t>());
      QCOMPARE(d.config.numHeads, config_["num_heads"].get<std::int64_t>());
      QCOMPARE(d.config.patchSize, config_["patch_size"].get<std::int64_t>());
      QCOMPARE(d.config.imageSize, config_["image_size"].get<std::int64_t>());
      QCOMPARE(d.config.mlpDim, config_["dim"].get<std::int64_t>() * config_["mlp_ratio"].get<std::int64_t>());
      QCOMPARE(d.headsSource, std::string("metadata"));
      QCOMPARE(d.config.variant(), std::string("tiny"));
      QVERIFY(d.naming == (std::string(name).find("_hf") == std::string::npos ? ClipVisionNaming::OpenClip
                                                                              : ClipVisionNaming::HuggingFace));
    }
    QCOMPARE(ClipVisionConfig{}.tokens(), std::int64_t{257});
    QCOMPARE(ClipVisionConfig{}.variant(), std::string("ViT-H/14"));
  }

  void officialPreprocessing() {
    const at::Tensor pixels =
        clipPreprocess(io_->tensor("image"), config_["image_size"].get<std::int64_t>(), ClipPreprocessing::Official);
    check("pixels (official)", pixels, io_->tensor("pixels"), kPixels);
  }

  // The comfyui mode by hand: shortest side to the size (bicubic, antialias), centre crop, 8-bit rounding.
  void comfyUiPreprocessing() {
    const at::Tensor image = io_->tensor("image");  // [2, 3, 60, 84]
    const std::int64_t size = config_["image_size"].get<std::int64_t>();
    const at::Tensor got = clipPreprocess(image, size, ClipPreprocessing::ComfyUi);
    QCOMPARE(got.sizes().vec(), (std::vector<std::int64_t>{2, 3, size, size}));
    const std::int64_t width = static_cast<std::int64_t>(std::nearbyint(84.0 * static_cast<double>(size) / 60.0));
    const at::Tensor resized = at::_upsample_bicubic2d_aa(image * 0.5 + 0.5, {size, width}, false);
    const at::Tensor cropped = resized.narrow(3, (width - size) / 2, size);
    const at::Tensor unit = at::round(at::clamp(cropped * 255.0, 0.0, 255.0)) / 255.0;
    const at::Tensor expected = (unit - io_->tensor("mean").view({1, 3, 1, 1})) / io_->tensor("std").view({1, 3, 1, 1});
    check("pixels (comfyui)", got, expected, {0.0, 0.0});
    // Every value sits on the 8-bit grid before normalisation.
    const at::Tensor levels =
        (got * io_->tensor("std").view({1, 3, 1, 1}) + io_->tensor("mean").view({1, 3, 1, 1})) * 255.0;
    QVERIFY((levels - at::round(levels)).abs().max().item<double>() < 1e-3);
    // Not the official squash: the two modes differ.
    QVERIFY(compareTensors(got, io_->tensor("pixels")).relL2 > 0.05);
    // An image already at the size is only rounded.
    const at::Tensor square = io_->tensor("pixels").narrow(0, 0, 1).clamp(-1, 1);
    const at::Tensor same = clipPreprocess(square, size, ClipPreprocessing::ComfyUi);
    const at::Tensor squareUnit = at::round((square * 0.5 + 0.5) * 255.0) / 255.0;
    check("pixels (comfyui, no resize)", same,
          (squareUnit - io_->tensor("mean").view({1, 3, 1, 1})) / io_->tensor("std").view({1, 3, 1, 1}), {1e-6, 1e-6});
  }

  void penultimateOutputOpenClip() {
    const ClipVisionEncoder encoder = ClipVisionEncoder::load(*weights_, {at::kFloat, at::kCPU});
    QVERIFY(encoder.naming() == ClipVisionNaming::OpenClip);
    check("out (open-clip names)", encoder.forward(io_->tensor("pixels")), io_->tensor("out"), kOutput);
    check("out_all_blocks", encoder.forward(io_->tensor("pixels"), encoder.config().numLayers),
          io_->tensor("out_all_blocks"), kOutput);
    check("encode(image) (official)", encoder.encode(io_->tensor("image")), io_->tensor("out"), kOutput);
    // The last block matters: using it instead of the penultimate state is a real error.
    QVERIFY(compareTensors(io_->tensor("out_all_blocks"), io_->tensor("out")).relL2 > 0.1);
  }

  void penultimateOutputHuggingFace() {
    const io::WeightSet hf = io::WeightSet::open(golden("clip_vision_tiny_hf.safetensors"));
    const ClipVisionEncoder encoder = ClipVisionEncoder::load(hf, {at::kFloat, at::kCPU});
    QVERIFY(encoder.naming() == ClipVisionNaming::HuggingFace);
    check("out (HF names)", encoder.forward(io_->tensor("pixels")), io_->tensor("out"), kOutput);
  }

  // The published towers are stored in float16 (the reference runs them under fp16 autocast): an F16 file
  // computes its matmuls in half precision, LayerNorms and the residual stream in float32.
  void halfPrecisionFile() {
    const io::WeightSet half = edited("half.safetensors", [](io::NamedTensors& t) {
      for (auto& [name, tensor] : t) tensor = tensor.to(at::kHalf);
    });
    const ClipVisionEncoder encoder = ClipVisionEncoder::load(half);
    QVERIFY(encoder.computeDtype() == at::kHalf);
    const at::Tensor out = encoder.forward(io_->tensor("pixels"));
    QVERIFY(out.scalar_type() == at::kFloat);
    check("out (F16 weights, half matmuls)", out, io_->tensor("out"), {2e-2, 5e-3});
  }

  void textTowerAndHeadAreIgnored() {
    const io::WeightSet weights = edited("with_text.safetensors", [](io::NamedTensors& t) {
      t.emplace_back("textual.token_embedding.weight", at::zeros({4, 4}));
      t.emplace_back("log_scale", at::zeros({}));
    });
    const ClipVisionEncoder encoder = ClipVisionEncoder::load(weights, {at::kFloat, at::kCPU});
    check("out (with text tower)", encoder.forward(io_->tensor("pixels")), io_->tensor("out"), kOutput);
  }

  void missingOrWrongTensorNamesFileAndKey() {
    const io::WeightSet missing = edited("missing.safetensors", [](io::NamedTensors& t) {
      std::erase_if(t, [](const auto& entry) { return entry.first == "visual.transformer.1.attn.proj.bias"; });
    });
    QString error = errorOf([&] { ClipVisionEncoder::load(missing); });
    QVERIFY2(error.contains("missing.safetensors") && error.contains("visual.transformer.1.attn.proj.bias"),
             qPrintable(error));
    const io::WeightSet wrong = edited("wrong_shape.safetensors", [](io::NamedTensors& t) {
      for (auto& [name, tensor] : t)
        if (name == "visual.transformer.0.mlp.2.weight") tensor = tensor.narrow(1, 0, 8).contiguous();
    });
    error = errorOf([&] { ClipVisionEncoder::load(wrong); });
    QVERIFY2(error.contains("wrong_shape.safetensors") && error.contains("visual.transformer.0.mlp.2.weight"),
             qPrintable(error));
    const io::WeightSet stray = edited("stray.safetensors", [](io::NamedTensors& t) {
      t.emplace_back("visual.transformer.0.attn.extra", at::zeros({2}));
    });
    error = errorOf([&] { ClipVisionEncoder::load(stray); });
    QVERIFY2(error.contains("stray.safetensors") && error.contains("visual.transformer.0.attn.extra"),
             qPrintable(error));
    const io::WeightSet notClip = io::WeightSet::open(golden("umt5_tiny.safetensors"));
    error = errorOf([&] { ClipVisionEncoder::load(notClip); });
    QVERIFY2(error.contains("umt5_tiny.safetensors") && error.contains("not a CLIP vision tower"), qPrintable(error));
    QVERIFY(errorOf([&] {
              ClipVisionEncoder::load(*weights_, {at::kFloat, at::kCPU}).forward(at::zeros({1, 3, 14, 14}));
            }).contains("pixels must be"));
  }
  // A models folder lists the tower under its own name, as the image encoder a model set can name.
  void catalogued() {
    for (const char* name : {"clip_vision_tiny.safetensors", "clip_vision_tiny_hf.safetensors"}) {
      const CataloguedModel m = catalogueModelFile(golden(name));
      QCOMPARE(m.id.family, std::string("clip_vision"));
      QVERIFY(m.id.role == ModelRole::ImageEncoder);
      QCOMPARE(std::string(roleName(m.id.role)), std::string("image_encoder"));
      QCOMPARE(m.id.description, std::string("CLIP vision, tiny"));
      QVERIFY2(m.problem.empty(), m.problem.c_str());
      QVERIFY(!m.lora);
    }
  }

  // shotchain verify WEIGHTS IO, with either naming.
  void verifyVerb() {
    for (const char* weights : {"clip_vision_tiny.safetensors", "clip_vision_tiny_hf.safetensors"}) {
      QProcess process;
      process.start(SHOTCHAIN_CLI,
                    {"verify", q(golden(weights).string()), q(golden("clip_vision_tiny_io.safetensors").string())});
      QVERIFY(process.waitForFinished(120000));
      const QString out = QString::fromUtf8(process.readAllStandardOutput());
      QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
      QVERIFY2(
          out.contains("CLIP vision encoder") && out.contains("out_all_blocks") && out.contains("3 compared, 0 failed"),
          qPrintable(out));
    }
  }
};

SHOTCHAIN_TEST(TestClipVisionGolden, Appless)
#include "test_clip_vision_golden.moc"
