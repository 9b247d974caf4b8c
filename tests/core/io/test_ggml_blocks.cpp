// The ggml block formats (tests/golden/README.md §13): every type dequantised bit for bit as the official gguf
// package does, on the CPU and on a CUDA device where there is one; the values the package quantised quantised
// again to its very bytes; quantise → dequantise within each type's error bound; bad calls refused by name.
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "io/ggml_dequant.h"
#include "io/ggml_quantise.h"
#include "io/ggml_types.h"
#include "io/safetensors_reader.h"
#include "runtime/cuda_device.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using io::GgmlType;
using shotchain::testing::errorOf;
using shotchain::testing::golden;
using shotchain::testing::q;

namespace {

constexpr const char* kLongName =
    "model.diffusion_model.blocks.0.cross_attn.norm_k_img.weight.a_name_longer_than_ggml_max_name";

// The fixture's tensors are named after their types (`q4_k`), but for two.
GgmlType fixtureType(const std::string& name) {
  if (name == "patch_embedding.weight") return GgmlType::F32;
  if (name == kLongName) return GgmlType::Q8_0;
  const std::optional<GgmlType> type = io::parseGgmlTypeName(name);
  if (!type) throw std::runtime_error("no ggml type named " + name);
  return *type;
}

// Quantise → dequantise of 16 × 1024 N(0, 1) values (seededNormal(…, 1)): the bound on the relative L2 error,
// the measured value (README §13) with some margin. ggml's own reference quantisers give the same figures.
struct RoundTripBound {
  GgmlType type;
  double bound;
};
constexpr RoundTripBound kRoundTrip[] = {
    {GgmlType::F32, 0.0},    {GgmlType::F16, 0.0003}, {GgmlType::BF16, 0.0025}, {GgmlType::Q8_0, 0.007},
    {GgmlType::Q6_K, 0.025}, {GgmlType::Q5_1, 0.045}, {GgmlType::Q5_K, 0.045},  {GgmlType::Q5_0, 0.05},
    {GgmlType::Q4_1, 0.09},  {GgmlType::Q4_K, 0.085}, {GgmlType::Q4_0, 0.10},   {GgmlType::Q3_K, 0.17},
    {GgmlType::Q2_K, 0.33},
};

// N(0, 1) values from a seeded mt19937 (Box–Muller), the same with every standard library.
std::vector<float> seededNormal(std::size_t count, unsigned seed) {
  std::mt19937 random(seed);
  const auto uniform = [&random] { return (static_cast<double>(random()) + 0.5) / 4294967296.0; };
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 2.0 * std::numbers::pi * uniform();
    values[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < count) values[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
  return values;
}

at::Tensor byteTensor(const std::vector<std::uint8_t>& bytes) {
  at::Tensor tensor = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kByte);
  if (!bytes.empty()) std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

// The bit patterns of float32 or bfloat16 values, so that equal means bit for bit (−0 and 0 apart).
at::Tensor bitsOf(const at::Tensor& values) {
  return values.contiguous().view(values.scalar_type() == at::kFloat ? at::kInt : at::kShort).cpu();
}

}  // namespace

class TestGgmlBlocks : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> expected_;
  std::shared_ptr<const io::SafetensorsFile> raw_;

  // The fixture's tensor names, in file order.
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const io::TensorEntry& entry : raw_->header().tensors)
      result.push_back(entry.name.substr(0, entry.name.size() - std::string(".raw").size()));
    return result;
  }

  at::Tensor raw(const std::string& name) const { return raw_->tensor(name + ".raw"); }

  // Dequantises every fixture tensor on `device` and compares it with the package's values, bit for bit, as
  // float32 and as bfloat16.
  void checkDequantisation(at::Device device) {
    std::set<GgmlType> types;
    for (const std::string& name : names()) {
      const GgmlType type = fixtureType(name);
      types.insert(type);
      const at::Tensor expected = expected_->tensor(name);
      const at::Tensor bytes = raw(name).to(device);
      const at::Tensor got = io::dequantiseGgml(bytes, type, expected.sizes(), at::kFloat);
      QVERIFY2(got.scalar_type() == at::kFloat && got.device() == device, name.c_str());
      QVERIFY2(got.sizes() == expected.sizes(), name.c_str());
      QVERIFY2(at::equal(bitsOf(got), bitsOf(expected)), (name + ": float32 values differ").c_str());
      const at::Tensor bf16 = io::dequantiseGgml(bytes, type, expected.sizes(), at::kBFloat16);
      QVERIFY2(bf16.scalar_type() == at::kBFloat16 && bf16.device() == device, name.c_str());
      QVERIFY2(at::equal(bitsOf(bf16), bitsOf(expected.to(at::kBFloat16))),
               (name + ": bfloat16 values differ").c_str());
    }
    QCOMPARE(types.size(), std::size_t{13});
  }

 private Q_SLOTS:
  void initTestCase() {
    for (const char* name : {"gguf_blocks_expected.safetensors", "gguf_blocks_raw.safetensors"})
      if (!std::filesystem::is_regular_file(golden(name)))
        QFAIL(qPrintable(QString("golden file missing: %1").arg(q(golden(name).string()))));
    expected_ = io::SafetensorsFile::open(golden("gguf_blocks_expected.safetensors"));
    raw_ = io::SafetensorsFile::open(golden("gguf_blocks_raw.safetensors"));
    QCOMPARE(names().size(), std::size_t{15});
  }

  void typesAreThoseOfGgml() {
    QVERIFY(io::ggmlTraits(GgmlType::Q4_K).name == "Q4_K");
    QCOMPARE(io::ggmlTraits(GgmlType::Q4_K).blockElements, 256u);
    QCOMPARE(io::ggmlTraits(GgmlType::Q4_K).blockBytes, 144u);
    QCOMPARE(io::ggmlTraits(GgmlType::Q8_0).blockBytes, 34u);
    QCOMPARE(io::ggmlTraits(GgmlType::BF16).blockBytes, 2u);
    QCOMPARE(io::ggmlTraits(GgmlType::F32).blockBytes, 4u);
    int supported = 0;
    for (std::uint32_t id = 0; id < 64; ++id)
      if (const std::optional<GgmlType> type = io::ggmlTypeFromId(id)) {
        ++supported;
        QCOMPARE(static_cast<std::uint32_t>(*type), id);
        QVERIFY(io::parseGgmlTypeName(io::ggmlTraits(*type).name) == type);
        QCOMPARE(io::isBlockQuantised(*type), io::ggmlTraits(*type).blockElements > 1);
      }
    QCOMPARE(supported, 13);
    QVERIFY(io::parseGgmlTypeName("q4_k") == GgmlType::Q4_K);
    QVERIFY(io::parseGgmlTypeName("Bf16") == GgmlType::BF16);
    QVERIFY(!io::parseGgmlTypeName("q4_k_m"));
    QVERIFY(!io::parseGgmlTypeName("iq2_xxs"));
    QCOMPARE(q(io::ggmlTypeIdName(16)), QString("IQ2_XXS (type 16)"));
    QCOMPARE(q(io::ggmlTypeIdName(12)), QString("Q4_K (type 12)"));
    QCOMPARE(q(io::ggmlTypeIdName(99)), QString("type 99"));
  }

  void dequantisesAsTheGgufPackage() { checkDequantisation(at::kCPU); }

  void dequantisesOnCudaAlike() {
    if (!runtime::describeCudaDevice().available) QSKIP("no CUDA device");
    checkDequantisation(at::Device(at::kCUDA, 0));
  }

  // A tensor of more than 2^20 values is dequantised a part at a time: the parts join without a seam.
  void largeTensorsAlike() {
    for (const char* name : {"q4_k", "q8_0", "q3_k"}) {
      const at::Tensor expected = expected_->tensor(name).repeat({600, 1});
      const at::Tensor got = io::dequantiseGgml(raw(name).repeat({600}), fixtureType(name), {2400, 512}, at::kBFloat16);
      QVERIFY2(at::equal(bitsOf(got), bitsOf(expected.to(at::kBFloat16))), name);
    }
  }

  // What gguf-py quantised (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), quantised again: the same bytes.
  void quantisesAsTheGgufPackage() {
    int checked = 0;
    for (const std::string& name : names()) {
      const io::TensorEntry* input = expected_->find(name + ".input");
      if (input == nullptr) continue;
      ++checked;
      const at::Tensor values = expected_->tensor(*input).contiguous();
      const std::vector<std::uint8_t> bytes =
          io::quantiseGgml(std::span<const float>(values.data_ptr<float>(), static_cast<std::size_t>(values.numel())),
                           fixtureType(name));
      const std::string_view stored = raw_->rawBytes(*raw_->find(name + ".raw"));
      QCOMPARE(bytes.size(), stored.size());
      std::size_t firstDifference = 0;
      while (firstDifference < bytes.size() &&
             bytes[firstDifference] == static_cast<std::uint8_t>(stored[firstDifference]))
        ++firstDifference;
      QVERIFY2(firstDifference == bytes.size(),
               (name + ": byte " + std::to_string(firstDifference) + " differs").c_str());
    }
    QCOMPARE(checked, 10);
  }

  void roundTripsWithinBounds() {
    const std::vector<float> values = seededNormal(16 * 1024, 1);
    const at::Tensor original = at::from_blob(const_cast<float*>(values.data()), {16, 1024}, at::kFloat);
    for (const RoundTripBound& bound : kRoundTrip) {
      const std::vector<std::uint8_t> bytes = io::quantiseGgml(values, bound.type);
      const at::Tensor back = io::dequantiseGgml(byteTensor(bytes), bound.type, {16, 1024}, at::kFloat);
      const double error = ((back - original).norm() / original.norm()).item<double>();
      const std::string name(io::ggmlTraits(bound.type).name);
      QVERIFY2(
          error <= bound.bound,
          (name + ": relative L2 error " + std::to_string(error) + " above " + std::to_string(bound.bound)).c_str());
    }
  }

  void refusesBadCalls() {
    const at::Tensor blocks = raw("q4_k");  // 8 blocks of 144 bytes, [4, 512]
    QString error = errorOf([&] {
      io::dequantiseGgml(blocks.slice(0, 0, 1000), GgmlType::Q4_K, {4, 512}, at::kFloat);
    });
    QVERIFY2(error.contains("Q4_K") && error.contains("[4, 512]") && error.contains("expected 1152 bytes") &&
                 error.contains("got 1000"),
             qPrintable(error));
    error = errorOf([&] { io::dequantiseGgml(blocks, GgmlType::Q4_K, {16, 128}, at::kFloat); });
    QVERIFY2(error.contains("innermost dimension 128") && error.contains("block size 256"), qPrintable(error));
    error = errorOf([&] { io::dequantiseGgml(blocks, GgmlType::Q4_K, {2048}, at::kFloat); });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    error = errorOf([&] { io::dequantiseGgml(blocks.to(at::kInt), GgmlType::Q4_K, {4, 512}, at::kFloat); });
    QVERIFY2(error.contains("uint8"), qPrintable(error));
    error = errorOf([&] { io::dequantiseGgml(blocks, GgmlType::Q4_K, {4, 512}, at::kInt); });
    QVERIFY2(error.contains("not a floating type"), qPrintable(error));

    std::vector<float> values(100, 1.0f);
    error = errorOf([&] { io::quantiseGgml(values, GgmlType::Q8_0); });
    QVERIFY2(error.contains("100 values") && error.contains("Q8_0") && error.contains("32-value blocks"),
             qPrintable(error));
    values.resize(64);
    values[37] = std::nanf("");
    error = errorOf([&] { io::quantiseGgml(values, GgmlType::Q4_0); });
    QVERIFY2(error.contains("value 37 is not finite"), qPrintable(error));
    values[37] = 1e30f;
    error = errorOf([&] { io::quantiseGgml(values, GgmlType::Q4_0); });
    QVERIFY2(error.contains("block 1") && error.contains("too large"), qPrintable(error));
    QVERIFY(errorOf([&] { io::quantiseGgml(values, GgmlType::F16); }).isEmpty());  // infinity is an fp16 value
  }
};

SHOTCHAIN_TEST(TestGgmlBlocks, Appless)
#include "test_ggml_blocks.moc"
