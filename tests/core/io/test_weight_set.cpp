#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include "io/fp8.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "raw_safetensors.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::io;

using shotchain::testing::errorOf;
using shotchain::testing::rawSafetensors;

namespace {

float halfBitsToFloat(std::uint16_t bits) {
  return at::from_blob(&bits, {1}, at::kShort).view(at::kHalf).to(at::kFloat).item<float>();
}

std::string floatBytes(std::initializer_list<float> values) {
  std::string out;
  for (const float v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

class TestWeightSet : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void e4m3KnownValues() {
    const auto& t = float8E4M3Table();
    QCOMPARE(t[0x00], 0.0f);
    QVERIFY(std::signbit(t[0x80]) && t[0x80] == 0.0f);
    QCOMPARE(t[0x38], 1.0f);    // E=7, M=0
    QCOMPARE(t[0x7E], 448.0f);  // largest finite
    QCOMPARE(t[0xFE], -448.0f);
    QCOMPARE(t[0x01], 0.001953125f);   // smallest subnormal 2^-9
    QCOMPARE(t[0x08], 0.015625f);      // smallest normal 2^-6
    QCOMPARE(t[0x07], 7.0f / 512.0f);  // largest subnormal
    QVERIFY(std::isnan(t[0x7F]) && std::isnan(t[0xFF]));
    int nans = 0;
    for (const float v : t) nans += std::isnan(v) ? 1 : 0;
    QCOMPARE(nans, 2);  // no infinities, NaN only at 0x7F / 0xFF
  }

  void e4m3MatchesTheFp16BitMap() {
    // wan21.md §5.1: for normals fp16 = S<<15 | (E+8)<<10 | M<<7, an independent derivation.
    const auto& t = float8E4M3Table();
    for (unsigned b = 0; b < 256; ++b) {
      const unsigned s = b >> 7, e = (b >> 3) & 0xF, m = b & 7;
      if (e == 0 || (e == 15 && m == 7)) continue;
      const auto bits = static_cast<std::uint16_t>(s << 15 | (e + 8) << 10 | m << 7);
      QCOMPARE(t[b], halfBitsToFloat(bits));
    }
  }

  void e5m2IsTheTopByteOfFp16() {
    const auto& t = float8E5M2Table();
    for (unsigned b = 0; b < 256; ++b) {
      const float expected = halfBitsToFloat(static_cast<std::uint16_t>(b << 8));
      if (std::isnan(expected))
        QVERIFY(std::isnan(t[b]));
      else
        QCOMPARE(t[b], expected);
    }
    QVERIFY(std::isinf(t[0x7C]) && t[0x7C] > 0);
  }

  void float8TensorsDecode() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "f8.safetensors";
    writeBytes(path, rawSafetensors({{"a", "F8_E4M3", {4}, std::string("\x38\x7E\x01\xC0", 4)},
                                     {"b", "F8_E5M2", {2}, std::string("\x3C\xC0", 2)}}));
    const auto file = SafetensorsFile::open(path);
    const at::Tensor a = file->tensor("a");
    QCOMPARE(a.scalar_type(), at::kFloat);
    QVERIFY(at::equal(a, at::tensor({1.0f, 448.0f, 0.001953125f, -2.0f})));
    QVERIFY(at::equal(file->tensor("b"), at::tensor({1.0f, -2.0f})));
    QCOMPARE(file->tensor("a", at::kBFloat16).scalar_type(), at::kBFloat16);
    QVERIFY(at::equal(file->tensor("a", at::kBFloat16).to(at::kFloat), a));  // exact in bf16
  }

  void legacyScaledFp8() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "scaled.safetensors";
    // Prefixed keys, marker, scalar scale of shape [] and an ignored input scale.
    writeBytes(
        path, rawSafetensors({{"model.diffusion_model.scaled_fp8", "F8_E4M3", {2}, std::string(2, '\0')},
                              {"model.diffusion_model.l.weight", "F8_E4M3", {2, 2}, std::string("\x38\x40\x30\xB8", 4)},
                              {"model.diffusion_model.l.scale_weight", "F32", {}, floatBytes({0.5f})},
                              {"model.diffusion_model.l.scale_input", "F32", {}, floatBytes({3.0f})},
                              {"model.diffusion_model.l.bias", "F32", {2}, floatBytes({1.0f, 2.0f})},
                              {"vae.x", "F32", {1}, floatBytes({9.0f})}}));
    const WeightSet set = WeightSet::open(path);
    QCOMPARE(set.strippedPrefix(), std::string("model.diffusion_model."));
    QCOMPARE(set.droppedKeys(), std::size_t{1});
    QCOMPARE(set.weights().size(), std::size_t{2});  // marker and scales hidden
    QVERIFY(set.quantisation().starts_with("scaled_fp8"));
    const at::Tensor w = set.load("l.weight", at::kFloat);
    QVERIFY(at::equal(w, at::tensor({0.5f, 1.0f, 0.25f, -0.5f}).view({2, 2})));
    QVERIFY(at::equal(set.load("l.bias", at::kFloat), at::tensor({1.0f, 2.0f})));
    QCOMPARE(set.load("l.weight", at::kBFloat16).scalar_type(), at::kBFloat16);
  }

  void newerRowwiseFp8() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "rowwise.safetensors";
    const std::string quant = R"({"format":"float8_e4m3fn_rowwise"})";
    writeBytes(path, rawSafetensors({{"l.weight", "F8_E4M3", {2, 2}, std::string("\x38\x40\x30\xB8", 4)},
                                     {"l.weight_scale", "F32", {2}, floatBytes({2.0f, 10.0f})},
                                     {"l.comfy_quant", "U8", {static_cast<std::int64_t>(quant.size())}, quant}}));
    const WeightSet set = WeightSet::open(path);
    QVERIFY(set.find("l.weight")->perRowScale);
    QVERIFY(at::equal(set.load("l.weight", at::kFloat), at::tensor({2.0f, 4.0f, 5.0f, -10.0f}).view({2, 2})));
    QCOMPARE(set.quantisation(), std::string("comfy_quant float8_e4m3fn_rowwise"));
  }

  void unknownQuantisationIsRefusedByName() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "nvfp4.safetensors";
    writeBytes(
        path,
        rawSafetensors({{"l.weight", "F8_E4M3", {1, 2}, std::string("\x38\x40", 2)},
                        {"l.weight_scale", "F32", {}, floatBytes({1.0f})}},
                       "{\"_quantization_metadata\":\"{\\\"layers\\\":{\\\"l\\\":{\\\"format\\\":\\\"nvfp4\\\"}}}\"}"));
    const QString message = errorOf([&] { (void)WeightSet::open(path); });
    QVERIFY2(message.contains("nvfp4.safetensors: layer \"l\": quantisation format \"nvfp4\" is not supported"),
             qPrintable(message));
    const auto block = std::filesystem::path(dir.path().toStdString()) / "block.safetensors";
    writeBytes(block, rawSafetensors({{"l.weight", "F8_E4M3", {2, 2}, std::string(4, '\x38')},
                                      {"l.weight_scale", "F32", {2, 2}, floatBytes({1, 1, 1, 1})}}));
    QVERIFY(errorOf([&] { (void)WeightSet::open(block); }).contains("block-wise scales are not supported"));
  }

  void shardedCheckpoint() {
    QTemporaryDir dir;
    const auto root = std::filesystem::path(dir.path().toStdString());
    saveSafetensors(root / "m-00001-of-00002.safetensors", {{"a", at::ones({2})}, {"b", at::zeros({3})}});
    saveSafetensors(root / "m-00002-of-00002.safetensors", {{"c", at::full({1}, 7.0)}});
    auto index = [&](const std::string& map) {
      writeBytes(root / "m.safetensors.index.json", "{\"metadata\":{\"total_size\":24},\"weight_map\":{" + map + "}}");
      return root / "m.safetensors.index.json";
    };
    const WeightSet set = WeightSet::open(index(
        R"("a":"m-00001-of-00002.safetensors","b":"m-00001-of-00002.safetensors","c":"m-00002-of-00002.safetensors")"));
    QCOMPARE(set.fileCount(), std::size_t{2});
    QCOMPARE(set.weights().size(), std::size_t{3});
    QCOMPARE(set.load("c", at::kFloat).item<float>(), 7.0f);
    QCOMPARE(set.totalBytes(), std::uint64_t{24});

    QVERIFY(errorOf([&] {
              (void)WeightSet::open(index(R"("a":"../m-00001-of-00002.safetensors")"));
            }).contains("must be a plain file name"));
    QVERIFY(
        errorOf([&] { (void)WeightSet::open(index(R"("a":"/etc/passwd")")); }).contains("must be a plain file name"));
    QVERIFY(errorOf([&] {
              (void)WeightSet::open(index(R"("a":"m-00001-of-00002.safetensors","c":"m-00002-of-00002.safetensors")"));
            }).contains("tensor \"b\" of m-00001-of-00002.safetensors is not in the weight_map"));
    QVERIFY(
        errorOf([&] {
          (void)WeightSet::open(index(
              R"("a":"m-00001-of-00002.safetensors","b":"m-00002-of-00002.safetensors","c":"m-00002-of-00002.safetensors")"));
        })
            .contains("tensor \"b\" is in m-00001-of-00002.safetensors but the weight_map says "
                      "m-00002-of-00002.safetensors"));
    QVERIFY(errorOf([&] {
              (void)WeightSet::open(index(R"("a":"m-00001-of-00002.safetensors","a":"m-00002-of-00002.safetensors")"));
            }).contains("duplicate key \"a\""));
    QVERIFY(errorOf([&] {
              (void)WeightSet::open(index(R"("a":"missing.safetensors")"));
            }).contains("missing.safetensors: cannot open"));
  }

  void prefixKeptWhenFewKeysCarryIt() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "p.safetensors";
    saveSafetensors(path, {{"a", at::ones({1})}, {"b", at::ones({1})}, {"model.diffusion_model.c", at::ones({1})}});
    const WeightSet set = WeightSet::open(path);
    QVERIFY(set.strippedPrefix().empty());
    QVERIFY(set.find("model.diffusion_model.c") != nullptr);
  }

  // Every model loads through one strict loader: all problems of a file in one message, before
  // any tensor is read; a tolerated extra is not a problem; names can differ from stored names.
  void strictLoaderListsEveryProblemAtOnce() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "m.safetensors";
    saveSafetensors(
        path, {{"w1", at::ones({2, 3})}, {"w2", at::ones({4})}, {"extra", at::ones({1})}, {"tied", at::ones({1})}});
    const WeightSet set = WeightSet::open(path);
    StrictWeightLoader bad(set, "a test model");
    bad.require("w1", {2, 3}, at::kFloat);
    bad.require("w2", {5}, at::kFloat);
    bad.require("w3", {1}, at::kFloat);
    bad.tolerate([](const std::string& name) { return name == "tied"; });
    const QString message = errorOf([&] { (void)bad.finish(at::kCPU); });
    QVERIFY2(message.startsWith(QString::fromStdString(set.label()) +
                                ": not a test model (1 missing, 1 with another shape, 1 unexpected)"),
             qPrintable(message));
    QVERIFY2(message.contains("tensor \"w3\" is missing"), qPrintable(message));
    QVERIFY2(message.contains("tensor \"w2\" has shape [4] but the config needs [5]"), qPrintable(message));
    QVERIFY2(message.contains("unexpected tensor \"extra\""), qPrintable(message));
    QVERIFY2(!message.contains("\"tied\""), qPrintable(message));

    StrictWeightLoader good(set, "a test model");
    good.require("first", {2, 3}, at::kDouble, "w1");
    good.require("w2", {4}, at::kFloat);
    good.tolerate([](const std::string& name) { return name == "tied" || name == "extra"; });
    const std::map<std::string, at::Tensor> tensors = good.finish(at::kCPU);
    QCOMPARE(tensors.size(), std::size_t{2});
    QCOMPARE(tensors.at("first").scalar_type(), at::kDouble);
    QVERIFY(at::equal(tensors.at("w2"), at::ones({4})));
  }

  void picklesAreRefused() {
    QVERIFY(errorOf([] {
              (void)WeightSet::open("models_t5_umt5-xxl-enc-bf16.ckpt");
            }).startsWith("models_t5_umt5-xxl-enc-bf16.ckpt: PyTorch pickle checkpoints are never loaded"));
    QVERIFY(errorOf([] { (void)WeightSet::open("missing.pth"); }).startsWith("missing.pth: cannot open"));
  }
};

SHOTCHAIN_TEST(TestWeightSet, Appless)
#include "test_weight_set.moc"
