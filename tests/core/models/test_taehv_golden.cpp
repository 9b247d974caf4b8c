#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/taehv/taehv_decoder.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::errorOf;
using shotchain::testing::golden;
using shotchain::testing::goldenMismatch;
using shotchain::testing::q;
using shotchain::testing::Tolerance;

namespace {

// Golden README §14: frames in [0, 1] (mean ≈ 0.52, std ≈ 0.24). Measured on CPU: float32 9.5e-7 max-abs, 2.6e-7
// rel-L2 (channels-last convolutions sum in another order than the reference); bfloat16 weights and activations
// 1.7e-2 / 4.3e-3; F16-stored weights (the published taew2_1 is fp16) decoded in float32 7.9e-4 / 2.5e-4.
constexpr Tolerance kFloat32{1e-5, 2e-6};
constexpr Tolerance kBFloat16{4e-2, 1e-2};
constexpr Tolerance kHalfWeights{4e-3, 1e-3};

const std::array<std::string, 2> kVariants{"wan21", "wan22"};

std::string weightsFile(const std::string& variant) { return "taehv_tiny_" + variant + ".safetensors"; }
std::string ioFile(const std::string& variant) { return "taehv_tiny_" + variant + "_io.safetensors"; }

// The golden latents NTCHW → what the DiT holds, [B, C, T, h, w].
at::Tensor ditLayout(const at::Tensor& ntchw) { return ntchw.permute({0, 2, 1, 3, 4}).contiguous(); }

}  // namespace

class TestTaehvGolden : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  void check(const std::string& what, const at::Tensor& got, const at::Tensor& expected, Tolerance tolerance) {
    const std::string problem = goldenMismatch(what, got, expected, tolerance);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  // The wan21 weights with `edit` applied to the (name, tensor) list, saved under `name`.
  io::WeightSet edited(const std::string& name, const std::function<void(io::NamedTensors&)>& edit) {
    const auto file = io::SafetensorsFile::open(golden(weightsFile("wan21")));
    io::NamedTensors tensors;
    for (const auto& entry : file->header().tensors) tensors.emplace_back(entry.name, file->tensor(entry));
    edit(tensors);
    const std::filesystem::path path = dir_.filePath(q(name)).toStdString();
    io::saveSafetensors(path, tensors, file->header().metadata);
    return io::WeightSet::open(path);
  }

 private Q_SLOTS:
  void initTestCase() {
    for (const std::string& variant : kVariants)
      for (const std::string& name : {weightsFile(variant), ioFile(variant)})
        if (!std::filesystem::is_regular_file(golden(name)))
          QFAIL(qPrintable(QString("golden file missing: %1").arg(q(golden(name).string()))));
  }

  // Every value the official constructor is given comes from the shapes.
  void detectsTheConfiguration() {
    for (const std::string& variant : kVariants) {
      const auto io = io::SafetensorsFile::open(golden(ioFile(variant)));
      const nlohmann::json config = nlohmann::json::parse(io->header().metadata.at("config"));
      const TaehvDetection d = detectTaehv(io::WeightSet::open(golden(weightsFile(variant))));
      QVERIFY2(d.problems.empty(), d.problems.empty() ? "" : d.problems.front().c_str());
      QVERIFY(d.isTaehv);
      QVERIFY(d.hasEncoder);
      QCOMPARE(d.config.latentChannels, config["latent_channels"].get<std::int64_t>());
      QCOMPARE(d.config.patchSize, config["patch_size"].get<std::int64_t>());
      const auto widths = config["decoder_widths"].get<std::vector<std::int64_t>>();
      QCOMPARE(std::vector<std::int64_t>(d.config.widths.begin(), d.config.widths.end()), widths);
      const auto upscale = config["decoder_time_upscale"].get<std::vector<bool>>();
      for (std::size_t s = 0; s < 3; ++s) QCOMPARE(d.config.timeStrides[s], std::int64_t{upscale[s] ? 2 : 1});
      QCOMPARE(d.config.timeUpscale(), config["t_upscale"].get<std::int64_t>());
      QCOMPARE(d.config.framesToTrim(), config["frames_to_trim"].get<std::int64_t>());
      QCOMPARE(d.config.variant(), std::string("tiny"));
      QVERIFY(d.config.activation == TaehvActivation::Relu);
    }
    QCOMPARE(TaehvConfig{}.variant(), std::string("taew2_1"));
    QCOMPARE(TaehvConfig{}.outputFrames(21), std::int64_t{81});
    QCOMPARE(TaehvConfig{}.outputFrames(1), std::int64_t{1});
    QCOMPARE(TaehvConfig{}.spatialUpscale(), std::int64_t{8});
    TaehvConfig wan22;
    wan22.latentChannels = 48;
    wan22.patchSize = 2;
    QCOMPARE(wan22.variant(), std::string("taew2_2"));
    QCOMPARE(wan22.spatialUpscale(), std::int64_t{16});
  }

  // decode_video(latents, parallel=True): 3 latent frames → 4·3 − 3 = 9 frames; batch 2 for wan21 (each item's first
  // frame has an empty past).
  void decodesLikeTheOfficialCode() {
    for (const std::string& variant : kVariants) {
      const auto io = io::SafetensorsFile::open(golden(ioFile(variant)));
      const TaehvDecoder decoder = TaehvDecoder::load(io::WeightSet::open(golden(weightsFile(variant))));
      QVERIFY(decoder.computeDtype() == at::kFloat);
      const at::Tensor latents = ditLayout(io->tensor("latents"));
      const at::Tensor given = latents.clone();
      const at::Tensor frames = decoder.decode(latents);
      QVERIFY(frames.scalar_type() == at::kFloat);
      QCOMPARE(frames.size(1), decoder.config().outputFrames(latents.size(2)));
      check(variant + " frames", frames, io->tensor("frames"), kFloat32);
      QVERIFY(at::equal(latents, given));
      check(variant + " frames (one latent frame a chunk)", decoder.decode(latents, 1), io->tensor("frames"), kFloat32);
      check(variant + " frames (two latent frames a chunk)", decoder.decode(latents, 2), io->tensor("frames"),
            kFloat32);
      check(variant + " first latent frame", decoder.decode(latents.narrow(2, 0, 1)), io->tensor("first.frames"),
            kFloat32);
      check(variant + " unbatched [C, T, h, w]", decoder.decode(latents[0]), io->tensor("frames")[0], kFloat32);
      check(variant + " double latents", decoder.decode(latents.to(at::kDouble)), io->tensor("frames"), kFloat32);
      QVERIFY(at::equal(latents, given));
    }
  }

  void bfloat16Compute() {
    for (const std::string& variant : kVariants) {
      const auto io = io::SafetensorsFile::open(golden(ioFile(variant)));
      TaehvLoadOptions options;
      options.computeDtype = at::kBFloat16;
      const TaehvDecoder decoder = TaehvDecoder::load(io::WeightSet::open(golden(weightsFile(variant))), options);
      QVERIFY(decoder.computeDtype() == at::kBFloat16);
      const at::Tensor latents = ditLayout(io->tensor("latents"));
      const at::Tensor given = latents.clone();
      const at::Tensor frames = decoder.decode(latents);
      QVERIFY(frames.scalar_type() == at::kFloat);
      check(variant + " frames (bf16)", frames, io->tensor("frames"), kBFloat16);
      QVERIFY(at::equal(latents, given));
    }
  }

  // TAEHV(decoder_time_upscale=(False, False), decoder_space_upscale=(True, True, False)): one frame per latent
  // frame, nothing trimmed, the TGrow weights cut to their last-timestep rows.
  void reducedPreview() {
    const auto io = io::SafetensorsFile::open(golden(ioFile("wan21")));
    TaehvLoadOptions options;
    options.timeUpscale = {false, false, false};
    options.spaceUpscale = {true, true, false};
    const TaehvDecoder decoder = TaehvDecoder::load(io::WeightSet::open(golden(weightsFile("wan21"))), options);
    QCOMPARE(decoder.config().timeUpscale(), std::int64_t{1});
    QCOMPARE(decoder.config().framesToTrim(), std::int64_t{0});
    QCOMPARE(decoder.config().spatialUpscale(), std::int64_t{4});
    const at::Tensor latents = ditLayout(io->tensor("latents"));
    check("preview frames", decoder.decode(latents), io->tensor("preview.frames"), kFloat32);
    check("preview frames (chunked)", decoder.decode(latents, 1), io->tensor("preview.frames"), kFloat32);
  }

  // The published taew2_1.safetensors stores fp16.
  void halfPrecisionFile() {
    const io::WeightSet half = edited("half.safetensors", [](io::NamedTensors& t) {
      for (auto& [name, tensor] : t) tensor = tensor.to(at::kHalf);
    });
    const auto io = io::SafetensorsFile::open(golden(ioFile("wan21")));
    const TaehvDecoder decoder = TaehvDecoder::load(half);
    check("frames (F16 weights, float32 compute)", decoder.decode(ditLayout(io->tensor("latents"))),
          io->tensor("frames"), kHalfWeights);
  }

  void decoderOnlyFile() {
    const io::WeightSet decoderOnly = edited("decoder_only.safetensors", [](io::NamedTensors& t) {
      std::erase_if(t, [](const auto& entry) { return entry.first.starts_with("encoder."); });
    });
    QVERIFY(!detectTaehv(decoderOnly).hasEncoder);
    const auto io = io::SafetensorsFile::open(golden(ioFile("wan21")));
    check("frames (decoder-only file)", TaehvDecoder::load(decoderOnly).decode(ditLayout(io->tensor("latents"))),
          io->tensor("frames"), kFloat32);
  }

  void missingOrWrongTensorNamesFileAndKey() {
    const io::WeightSet missing = edited("missing.safetensors", [](io::NamedTensors& t) {
      std::erase_if(t, [](const auto& entry) { return entry.first == "decoder.10.conv.2.weight"; });
    });
    QString error = errorOf([&] { TaehvDecoder::load(missing); });
    QVERIFY2(error.contains("missing.safetensors") && error.contains("decoder.10.conv.2.weight"), qPrintable(error));
    const io::WeightSet noStageConv = edited("no_stage_conv.safetensors", [](io::NamedTensors& t) {
      std::erase_if(t, [](const auto& entry) { return entry.first == "decoder.14.weight"; });
    });
    error = errorOf([&] { TaehvDecoder::load(noStageConv); });
    QVERIFY2(error.contains("no_stage_conv.safetensors") && error.contains("decoder.14.weight"), qPrintable(error));
    const io::WeightSet wrong = edited("wrong_shape.safetensors", [](io::NamedTensors& t) {
      for (auto& [name, tensor] : t)
        if (name == "decoder.16.conv.0.bias") tensor = tensor.narrow(0, 0, 4).contiguous();
    });
    error = errorOf([&] { TaehvDecoder::load(wrong); });
    QVERIFY2(error.contains("wrong_shape.safetensors") && error.contains("decoder.16.conv.0.bias"), qPrintable(error));
    const io::WeightSet badGrow = edited("bad_grow.safetensors", [](io::NamedTensors& t) {
      for (auto& [name, tensor] : t)
        if (name == "decoder.13.conv.weight") tensor = at::cat({tensor, tensor.narrow(0, 0, 8)}).contiguous();
    });
    error = errorOf([&] { TaehvDecoder::load(badGrow); });
    QVERIFY2(error.contains("bad_grow.safetensors") && error.contains("decoder.13.conv.weight"), qPrintable(error));
    const io::WeightSet stray = edited("stray.safetensors", [](io::NamedTensors& t) {
      t.emplace_back("decoder.3.skip.weight", at::zeros({24, 24, 1, 1}));
    });
    error = errorOf([&] { TaehvDecoder::load(stray); });
    QVERIFY2(error.contains("stray.safetensors") && error.contains("decoder.3.skip.weight"), qPrintable(error));
  }

  void refusesWhatItDoesNotDecode() {
    const io::WeightSet encoderOnly = edited("encoder_only.safetensors", [](io::NamedTensors& t) {
      std::erase_if(t, [](const auto& entry) { return entry.first.starts_with("decoder."); });
    });
    TaehvDetection d = detectTaehv(encoderOnly);
    QVERIFY(!d.isTaehv && d.hasEncoder && !d.problems.empty());
    QString error = errorOf([&] { TaehvDecoder::load(encoderOnly); });
    QVERIFY2(error.contains("encoder_only.safetensors") && error.contains("encoder only"), qPrintable(error));
    // The super decoder starts with a 1×1 convolution (decoder.0.weight) where the base one has Clamp.
    const io::WeightSet super = edited("super.safetensors", [](io::NamedTensors& t) {
      t.emplace_back("decoder.0.weight", at::zeros({32, 16, 1, 1}));
    });
    error = errorOf([&] { TaehvDecoder::load(super); });
    QVERIFY2(error.contains("super.safetensors") && error.contains("super"), qPrintable(error));
    const io::WeightSet other = io::WeightSet::open(golden("umt5_tiny.safetensors"));
    d = detectTaehv(other);
    QVERIFY(!d.isTaehv && !d.hasEncoder && !d.problems.empty());
    const TaehvDecoder decoder = TaehvDecoder::load(io::WeightSet::open(golden(weightsFile("wan21"))));
    QVERIFY(errorOf([&] { decoder.decode(at::zeros({1, 48, 3, 4, 4})); }).contains("latents must be"));
    QVERIFY(errorOf([&] { decoder.decode(at::zeros({16, 3, 4})); }).contains("latents must be"));
  }
};

SHOTCHAIN_TEST(TestTaehvGolden, Appless)
#include "test_taehv_golden.moc"
