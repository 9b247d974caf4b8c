// The GGUF container: the fixture written by the official gguf package read through WeightSet (metadata, the 5-D
// and long-named tensors, every type dequantised as the package does), files written by GgufWriter read back, and
// hostile files (every cut, wrong counts, lengths, offsets, types, overlaps, and thousands of mutations) refused
// with a SafetensorsError that names the file, never a crash or an allocation sized by the file.
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <ATen/ATen.h>

#include "io/ggml_dequant.h"
#include "io/ggml_quantise.h"
#include "io/gguf_file.h"
#include "io/gguf_writer.h"
#include "io/safetensors_header.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using shotchain::testing::golden;

namespace {

std::string writerFile(std::vector<io::GgufTensorPlan> plans, std::uint64_t seed = 1) {
  io::GgufWriter writer({{"general.architecture", "wan"}, {"general.quantization_version", "2"}}, plans);
  std::mt19937_64 random(seed);
  std::normal_distribution<float> normal;
  for (const io::GgufTensorPlan& plan : plans) {
    std::uint64_t n = 1;
    for (const std::uint64_t d : plan.shape) n *= d;
    std::vector<float> values(n);
    for (float& v : values) v = normal(random);
    writer.append(io::quantiseGgml(values, plan.type));
  }
  return writer.finish();
}

template <typename T>
void poke(std::string& bytes, std::size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

}  // namespace

class TestGgufFile : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  std::filesystem::path write(const std::string& name, const std::string& bytes) const {
    const std::filesystem::path path = std::filesystem::path(dir_.path().toStdString()) / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }

  // The file is refused by WeightSet with a message that names it and says `what`.
  void refused(const std::string& bytes, const std::string& what) {
    const std::filesystem::path path = write("bad.gguf", bytes);
    try {
      io::WeightSet::open(path);
      QFAIL(("accepted; expected: " + what).c_str());
    } catch (const io::SafetensorsError& error) {
      const std::string message = error.what();
      QVERIFY2(message.starts_with("bad.gguf: GGUF"), message.c_str());
      QVERIFY2(message.find(what) != std::string::npos, (message + "\n  expected: " + what).c_str());
    }
  }

 private Q_SLOTS:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void readsTheOfficialPackagesFile() {
    const io::WeightSet weights = io::WeightSet::open(golden("gguf_blocks.gguf"));
    const auto expected = io::SafetensorsFile::open(golden("gguf_blocks_expected.safetensors"));
    QCOMPARE(weights.metadata().at("general.architecture"), std::string("wan"));
    QVERIFY(weights.quantisation().starts_with("GGUF "));
    const io::WeightInfo* patch = weights.find("patch_embedding.weight");
    QVERIFY(patch != nullptr);
    QCOMPARE(patch->shape, (std::vector<std::uint64_t>{8, 4, 1, 2, 2}));
    QCOMPARE(io::storedTypeName(*patch), std::string("F32"));
    int checked = 0;
    for (const io::TensorEntry& entry : expected->header().tensors) {
      if (entry.name.ends_with(".input")) continue;
      const io::WeightInfo* info = weights.find(entry.name);
      QVERIFY2(info != nullptr, entry.name.c_str());
      QCOMPARE(info->shape, entry.shape);
      const at::Tensor got = weights.load(entry.name, at::kFloat);
      QVERIFY2(at::equal(got, expected->tensor(entry)), entry.name.c_str());
      ++checked;
    }
    QVERIFY(checked >= 14);  // the 13 types and the 5-D tensor
    bool longName = false;
    for (const io::WeightInfo& info : weights.weights()) longName = longName || info.name.size() >= 64;
    QVERIFY2(longName, "the fixture's tensor with a name past ggml's 64 bytes is read");
  }

  void writtenFilesReadBackAsStored() {
    const std::vector<io::GgufTensorPlan> plans{{"blocks.0.ffn.0.weight", io::GgmlType::Q4_K, {4, 512}},
                                                {"blocks.0.ffn.2.weight", io::GgmlType::Q8_0, {2, 64}},
                                                {"head.modulation", io::GgmlType::F32, {1, 2, 3}},
                                                {"blocks.0.norm3.weight", io::GgmlType::BF16, {5}}};
    const std::filesystem::path path = write("written.gguf", writerFile(plans));
    const io::WeightSet weights = io::WeightSet::open(path);
    QCOMPARE(weights.weights().size(), plans.size());
    QCOMPARE(weights.quantisation(), std::string("GGUF Q4_K, Q8_0"));
    QVERIFY(weights.storedAsGgml("blocks.0.ffn.0.weight"));
    QVERIFY(!weights.storedAsGgml("head.modulation"));
    QCOMPARE(weights.ggmlBlockBytes(), std::uint64_t{4 * 2 * 144 + 2 * 2 * 34});
    const io::WeightSet::StoredGgml stored = weights.loadStoredGgml("blocks.0.ffn.0.weight");
    QCOMPARE(stored.blocks.sizes(), (at::IntArrayRef{4, 288}));
    QVERIFY(stored.type == io::GgmlType::Q4_K);
    const at::Tensor fromBlocks = io::dequantiseGgml(stored.blocks, stored.type, {4, 512}, at::kFloat);
    QVERIFY(at::equal(fromBlocks, weights.load("blocks.0.ffn.0.weight", at::kFloat)));
    QCOMPARE(weights.load("head.modulation", at::kFloat).sizes(), (at::IntArrayRef{1, 2, 3}));
    try {
      weights.loadStoredGgml("head.modulation");
      QFAIL("an F32 tensor handed out as blocks");
    } catch (const io::SafetensorsError& error) {
      QVERIFY(std::string(error.what()).find("head.modulation") != std::string::npos);
    }
  }

  void hostileHeadersAreRefusedByName() {
    const std::string good = writerFile({{"w", io::GgmlType::Q8_0, {2, 32}}, {"v", io::GgmlType::F32, {3}}});
    // Layout of this file: magic 0, version 4, tensors 8, keys 16, first key at 24.
    std::string b = good;
    b[0] = 'X';
    refused(b, "magic missing");
    b = good;
    poke<std::uint32_t>(b, 4, 1);
    refused(b, "version 1 is not supported");
    b = good;
    poke<std::uint32_t>(b, 4, 0x03000000u);
    refused(b, "big-endian");
    b = good;
    poke<std::uint64_t>(b, 8, 1ull << 60);
    refused(b, "items cannot fit");
    b = good;
    poke<std::uint64_t>(b, 16, 1ull << 60);
    refused(b, "items cannot fit");
    b = good;
    poke<std::uint64_t>(b, 24, 1ull << 62);  // the first key's length
    refused(b, "runs past the end of the file");

    const std::size_t tensorInfo = good.find(std::string("\x01\x00\x00\x00\x00\x00\x00\x00w", 9));
    QVERIFY(tensorInfo != std::string::npos);
    const std::size_t dims = tensorInfo + 9, ne0 = dims + 4, type = ne0 + 16, offset = type + 4;
    b = good;
    poke<std::uint32_t>(b, dims, 9);
    refused(b, "9 dimensions");
    b = good;
    poke<std::uint32_t>(b, type, 16);
    refused(b, "tensor \"w\": type IQ2_XXS (type 16) is not supported");
    b = good;
    poke<std::uint32_t>(b, type, 4242);
    refused(b, "type 4242 is not supported");
    b = good;
    poke<std::uint64_t>(b, ne0, 33);
    refused(b, "are not whole Q8_0 blocks of 32");
    b = good;
    poke<std::uint64_t>(b, ne0, 0);
    refused(b, "is zero or makes the element count overflow");
    b = good;
    poke<std::uint64_t>(b, ne0 + 8, 1ull << 40);
    refused(b, "run past the end of the file");
    b = good;
    poke<std::uint64_t>(b, offset, 7);
    refused(b, "is not a multiple of the alignment 32");
    b = good;
    poke<std::uint64_t>(b, offset, 1ull << 40);
    refused(b, "run past the end of the file");
    // The second tensor moved onto the first one's bytes.
    b = good;
    const std::size_t secondOffset = good.find(std::string("\x01\x00\x00\x00\x00\x00\x00\x00v", 9)) + 9 + 4 + 8 + 4;
    poke<std::uint64_t>(b, secondOffset, 32);
    refused(b, "overlap");
    b = good;
    b[tensorInfo + 8] = 'v';  // both tensors named "v"
    refused(b, "tensor \"v\" appears twice");
  }

  void everyCutIsRefused() {
    const std::string good = writerFile({{"w", io::GgmlType::Q4_0, {2, 64}}, {"v", io::GgmlType::F16, {3}}});
    QVERIFY(io::WeightSet::open(write("whole.gguf", good)).weights().size() == 2);
    for (std::size_t size = 0; size + 1 < good.size(); ++size) {
      const std::filesystem::path path = write("cut.gguf", good.substr(0, size));
      try {
        const io::WeightSet weights = io::WeightSet::open(path);
        // Past the last tensor's bytes only padding is cut; nothing else may open.
        QVERIFY2(size >= good.size() - 32, std::to_string(size).c_str());
        weights.load("w", at::kFloat);
      } catch (const io::SafetensorsError& error) {
        QVERIFY2(std::string(error.what()).starts_with("cut.gguf"), error.what());
      }
    }
  }

  void mutatedFilesNeverCrash() {
    const std::string good = writerFile({{"blocks.0.q.weight", io::GgmlType::Q4_K, {2, 256}},
                                         {"blocks.0.k.weight", io::GgmlType::Q6_K, {1, 256}},
                                         {"head.modulation", io::GgmlType::F32, {1, 2, 8}}});
    std::mt19937_64 random(7);
    int opened = 0;
    for (int i = 0; i < 5000; ++i) {
      std::string bytes = good;
      const int edits = 1 + static_cast<int>(random() % 6);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = random() % (random() % 2 == 0 ? std::min<std::size_t>(bytes.size(), 200) : bytes.size());
        switch (random() % 4) {
          case 0:
            bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
            break;
          case 1:
            bytes[at] = static_cast<char>(random() % 2 == 0 ? 0xff : 0x00);
            break;
          case 2:
            bytes.resize(random() % bytes.size() + 1);
            break;
          default:
            bytes.insert(at, bytes.substr(random() % bytes.size(), 1 + random() % 16));
        }
        if (bytes.empty()) bytes = "G";
      }
      const std::filesystem::path path = write("mutated.gguf", bytes);
      try {
        const io::WeightSet weights = io::WeightSet::open(path);
        for (const io::WeightInfo& info : weights.weights()) weights.load(info.name, at::kFloat);
        ++opened;
      } catch (const io::SafetensorsError& error) {
        QVERIFY2(std::string(error.what()).starts_with("mutated.gguf"), error.what());
      }
    }
    QVERIFY(opened > 0);  // edits of tensor data leave files that still open
  }
};

SHOTCHAIN_TEST(TestGgufFile, Appless)
#include "test_gguf_file.moc"
