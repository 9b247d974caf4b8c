#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include "io/pt_checkpoint.h"
#include "io/pt_pickle.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "raw_pt.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::io;
namespace pk = shotchain::testing::pickle;

using shotchain::testing::errorOf;
using shotchain::testing::ptArchive;

namespace {

std::filesystem::path golden(const char* name) { return std::filesystem::path(SHOTCHAIN_GOLDEN_DIR) / name; }

void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Same dtype, shape and bytes.
bool sameBytes(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<std::size_t>(x.numel() * x.element_size())) == 0;
}

const std::string kFloats =
    std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40", 16);  // 1 2 3 4

// One float32 [2,2] tensor "w" over storage "0", with sizes, strides, numel as given.
std::string oneTensorPickle(std::uint32_t numel = 4, std::vector<std::uint32_t> sizes = {2, 2},
                            std::vector<std::uint32_t> strides = {2, 1}, std::uint32_t offset = 0) {
  return pk::dictPickle({{"w", pk::tensor("FloatStorage", "0", numel, offset, sizes, strides)}});
}

}  // namespace

class TestPtCheckpoint : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  std::filesystem::path root() const { return dir_->path().toStdString(); }
  QString errorOpening(const std::string& bytes, const char* name = "t.pt") {
    writeBytes(root() / name, bytes);
    return errorOf([&] { (void)PtCheckpoint::open(root() / name); });
  }

 private Q_SLOTS:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void stateDictEqualsSafetensorsTwin() {
    const auto start = std::chrono::steady_clock::now();
    const auto checkpoint = PtCheckpoint::open(golden("wan_dit_tiny_state.pt"));
    const PtStateDict& dict = checkpoint->stateDict();
    const NamedTensors tensors = checkpoint->tensors(dict);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    qInfo("wan_dit_tiny_state.pt: %zu tensors opened and viewed in %.2f ms", tensors.size(), ms);
    const auto twin = SafetensorsFile::open(golden("wan_dit_tiny.safetensors"));
    QCOMPARE(dict.key, std::string());
    QCOMPARE(tensors.size(), std::size_t{69});
    QCOMPARE(twin->header().tensors.size(), std::size_t{69});
    for (const auto& [name, tensor] : tensors) {
      QVERIFY2(twin->find(name) != nullptr, name.c_str());
      QVERIFY2(sameBytes(tensor, twin->tensor(name)), name.c_str());
    }
  }

  void zeroCopyViewsOutliveTheCheckpoint() {
    at::Tensor view;
    std::string name;
    {
      const auto checkpoint = PtCheckpoint::open(golden("wan_dit_tiny_state.pt"));
      name = checkpoint->stateDict().tensors.front().name;
      view = checkpoint->tensor(checkpoint->stateDict().tensors.front());
    }
    QVERIFY(sameBytes(view, SafetensorsFile::open(golden("wan_dit_tiny.safetensors"))->tensor(name)));
  }

  void nestedCheckpointChoosesGenerator() {
    const auto checkpoint = PtCheckpoint::open(golden("wan_dit_tiny_nested.pt"));
    const PtArchive& archive = checkpoint->archive();
    QCOMPARE(archive.stateDicts.size(), std::size_t{2});
    QCOMPARE(checkpoint->stateDict().key, std::string("generator"));
    const PtStateDict& ema = checkpoint->stateDict("generator_ema");
    QCOMPARE(ema.strippedPrefix, std::string("model."));
    const auto twin = SafetensorsFile::open(golden("wan_dit_tiny.safetensors"));
    for (const auto& [name, tensor] : checkpoint->tensors(checkpoint->stateDict()))
      QVERIFY2(sameBytes(tensor, twin->tensor(name)), name.c_str());
    for (const auto& [name, tensor] : checkpoint->tensors(ema))
      QVERIFY2(sameBytes(tensor, twin->tensor(name) * 0.5), name.c_str());
    bool step = false, note = false;
    for (const auto& [key, value] : archive.values) {
      step = step || (key == "step" && value == "int 1234");
      note = note || (key == "note" && value == "str \"tiny\"");
    }
    QVERIFY(step && note);
    const QString missing = errorOf([&] { (void)checkpoint->stateDict("ema"); });
    QVERIFY2(missing.contains("no state dict \"ema\"") && missing.contains("\"generator_ema\""), qPrintable(missing));
  }

  void weightSetReadsCheckpoints() {
    const WeightSet set = WeightSet::open(golden("wan_dit_tiny_nested.pt"), "generator_ema");
    const WeightSet twin = WeightSet::open(golden("wan_dit_tiny.safetensors"));
    QCOMPARE(set.stateDictKey(), std::string("generator_ema"));
    QCOMPARE(set.strippedPrefix(), std::string("model."));
    QCOMPARE(set.weights().size(), twin.weights().size());
    QCOMPARE(set.totalBytes(), twin.totalBytes());
    for (std::size_t i = 0; i < set.weights().size(); ++i) {
      QCOMPARE(set.weights()[i].name, twin.weights()[i].name);
      QCOMPARE(set.weights()[i].shape, twin.weights()[i].shape);
      const std::string& name = set.weights()[i].name;
      QVERIFY2(sameBytes(set.load(name, at::kFloat), twin.load(name, at::kFloat) * 0.5), name.c_str());
    }
    QVERIFY(set.metadata().empty());
  }

  void layoutsMatchComputedValues() {
    const auto checkpoint = PtCheckpoint::open(golden("layouts.pt"));
    const auto twin = SafetensorsFile::open(golden("wan_dit_tiny.safetensors"));
    std::map<std::string, at::Tensor> t;
    for (auto& [name, tensor] : checkpoint->tensors(checkpoint->stateDict())) t[name] = tensor;
    QCOMPARE(t.size(), std::size_t{7});
    QVERIFY(sameBytes(t["a_bf16"], twin->tensor("blocks.0.self_attn.q.weight").to(at::kBFloat16)));
    QVERIFY(sameBytes(t["b_f16"], twin->tensor("blocks.0.self_attn.k.weight").to(at::kHalf)));
    const at::Tensor ffn = twin->tensor("blocks.0.ffn.0.weight");
    QVERIFY(sameBytes(t["e_same_storage"], ffn));
    const at::Tensor& transposed = t["c_transposed_view"];
    QCOMPARE(transposed.sizes().vec(), (std::vector<std::int64_t>{64, 128}));
    QCOMPARE(transposed.strides().vec(), (std::vector<std::int64_t>{1, 64}));
    QCOMPARE(transposed.data_ptr(), t["e_same_storage"].data_ptr());  // one storage, viewed twice
    QVERIFY(sameBytes(transposed, ffn.t()));
    const at::Tensor& rows = t["d_row_slice"];
    QCOMPARE(rows.storage_offset(), std::int64_t{192});
    QVERIFY(sameBytes(rows, ffn.narrow(0, 3, rows.size(0))));
    QVERIFY(sameBytes(t["f_i64"], at::arange(10, at::kLong)));
    QCOMPARE(t["g_scalar"].dim(), std::int64_t{0});
    QCOMPARE(t["g_scalar"].item<float>(), 3.5f);
  }

  void loraCheckpointAndItsMerge() {
    const auto lora = PtCheckpoint::open(golden("lora_tiny.pt"));
    const PtStateDict& dict = lora->stateDict();
    QCOMPARE(dict.key, std::string("generator_lora"));
    QCOMPARE(dict.tensors.size(), std::size_t{16});
    std::map<std::string, at::Tensor> t;
    for (auto& [name, tensor] : lora->tensors(dict)) t[name] = tensor;
    const auto expected = PtCheckpoint::open(golden("lora_tiny_expected_merged.pt"));
    const auto twin = SafetensorsFile::open(golden("wan_dit_tiny.safetensors"));
    std::size_t merged = 0;
    for (const auto& [name, want] : expected->tensors(expected->stateDict())) {
      const std::string layer = name.substr(0, name.size() - std::string(".weight").size());
      const at::Tensor a = t.at("base_model.model." + layer + ".lora_A.weight");
      const at::Tensor b = t.at("base_model.model." + layer + ".lora_B.weight");
      QCOMPARE(a.sizes().vec(), (std::vector<std::int64_t>{4, 64}));
      const at::Tensor got = twin->tensor(name) + 2.0 * at::matmul(b, a);
      QVERIFY2(at::allclose(got, want, 0, 1e-6), name.c_str());
      ++merged;
    }
    QCOMPARE(merged, std::size_t{8});
  }

  void legacyPickleIsRefusedWithAdvice() {
    const QString error = errorOf([] { (void)PtCheckpoint::open(golden("wan_dit_tiny_legacy.pt")); });
    QVERIFY2(error.startsWith("wan_dit_tiny_legacy.pt: a legacy (non-zip) PyTorch pickle"), qPrintable(error));
    QVERIFY2(error.contains("torch.save(torch.load(f, weights_only=True), out)"), qPrintable(error));
  }

  void handBuiltCheckpointLoads() {
    writeBytes(root() / "w.pt", ptArchive(oneTensorPickle(), {{"0", kFloats}}));
    const auto checkpoint = PtCheckpoint::open(root() / "w.pt");  // unaligned storage: a copy
    const at::Tensor w = checkpoint->tensor(checkpoint->stateDict().tensors.front());
    QVERIFY(at::equal(w, at::arange(1, 5, at::kFloat).reshape({2, 2})));
  }

  void zip64RecordsAreRead() {
    writeBytes(root() / "w64.pt", ptArchive(oneTensorPickle(), {{"0", kFloats}}, "w64", true));
    const auto checkpoint = PtCheckpoint::open(root() / "w64.pt");
    QCOMPARE(checkpoint->archive().prefix, std::string("w64"));
    QVERIFY(at::equal(checkpoint->tensor(checkpoint->stateDict().tensors.front()),
                      at::arange(1, 5, at::kFloat).reshape({2, 2})));
  }

  void stateDictAttributesAreIgnored() {
    // Module.state_dict() pickles its _metadata attribute with BUILD after the items.
    const std::string tensor = pk::tensor("FloatStorage", "0", 4, 0, {4}, {1});
    const std::string metadata = pk::orderedDict() + "(" + pk::str("") + "}" + pk::str("version") + "K\x01su";
    const std::string pickle = std::string("\x80\x02") + pk::orderedDict() + "(" + pk::str("w") + tensor + "u}" +
                               pk::str("_metadata") + metadata + "sb.";
    writeBytes(root() / "m.pt", ptArchive(pickle, {{"0", kFloats}}));
    QCOMPARE(PtCheckpoint::open(root() / "m.pt")->stateDict().tensors.size(), std::size_t{1});
    const std::string build = std::string("\x80\x02") + pk::orderedDict() + pk::str("x") + "b.";
    QVERIFY(errorOpening(ptArchive(build, {})).contains("BUILD is only read for an OrderedDict"));
    QVERIFY(errorOpening(testing::storedZip({{"archive/data.pkl", oneTensorPickle()}, {"archive/byteorder", "big"}}))
                .contains("only little-endian"));
  }

  void foreignGlobalsAreRefusedAndNothingRuns() {
    const std::filesystem::path marker = root() / "pwned";
    const std::string command = "touch " + marker.string();
    const std::pair<const char*, const char*> globals[] = {
        {"os", "system"},       {"posix", "system"}, {"builtins", "eval"},          {"builtins", "open"},
        {"subprocess", "call"}, {"torch", "load"},   {"collections", "defaultdict"}};
    for (const auto& [module, name] : globals) {
      const std::string call = pk::global(module, name) + pk::tuple({pk::str(command)}) + "R";
      const std::string pickle = pk::dictPickle({{"x", call}});
      const QString qualified = QString(module) + "." + name;
      const QString error = errorOpening(ptArchive(pickle, {}), "evil.pt");
      QVERIFY2(error.startsWith("evil.pt: archive/data.pkl: global " + qualified + " is not allowed"),
               qPrintable(error));
      QVERIFY2(error.contains("nothing was executed"), qPrintable(error));
      // The same bytes as a whole pickle, and with protocol 4's STACK_GLOBAL.
      const QString bare =
          errorOf([&] { (void)unpickleRestricted("p", std::as_bytes(std::span(pickle.data(), pickle.size()))); });
      QVERIFY2(bare.contains("global " + qualified), qPrintable(bare));
      const std::string stacked =
          std::string("\x80\x04") + pk::str(module) + pk::str(name) + "\x93" + pk::tuple({pk::str(command)}) + "R.";
      QVERIFY(errorOf([&] {
                (void)unpickleRestricted("p", std::as_bytes(std::span(stacked.data(), stacked.size())));
              }).contains("global " + qualified + " is not allowed"));
    }
    QVERIFY(!std::filesystem::exists(marker));
  }

  void storagesAreCheckedBeforeUse() {
    QVERIFY(
        errorOpening(ptArchive(oneTensorPickle(), {})).contains("its storage archive/data/0 is not in the archive"));
    QVERIFY(errorOpening(ptArchive(oneTensorPickle(), {{"0", kFloats.substr(0, 8)}})).contains("holds 8 bytes"));
    QVERIFY(
        errorOpening(ptArchive(oneTensorPickle(4, {2, 3}, {3, 1}), {{"0", kFloats}})).contains("reaches element 5"));
    QVERIFY(
        errorOpening(ptArchive(oneTensorPickle(4, {2, 2}, {2, 1}, 1), {{"0", kFloats}})).contains("reaches element 4"));
    QVERIFY(errorOpening(ptArchive(oneTensorPickle(), {{"0", kFloats}, {"1", kFloats}}, "a")).isEmpty());
  }

  void hugeClaimsAreRefusedWithoutAllocating() {
    const auto start = std::chrono::steady_clock::now();
    // A shape of (2^31-1)^3 over 4 elements, and a storage claiming 2^60 elements.
    QVERIFY(errorOpening(
                ptArchive(oneTensorPickle(4, {0x7fffffffu, 0x7fffffffu, 0x7fffffffu}, {1, 1, 1}), {{"0", kFloats}}))
                .contains("reaches element"));
    QVERIFY(errorOpening(ptArchive(oneTensorPickle(4, {0x7fffffffu, 0x7fffffffu, 0x7fffffffu},
                                                   {0x7fffffffu, 0x7fffffffu, 0x7fffffffu}),
                                   {{"0", kFloats}}))
                .contains("reach past any storage"));
    const std::string claimed = std::string("\x80\x02") + pk::orderedDict() + "(" + pk::str("w") +
                                pk::global("torch._utils", "_rebuild_tensor_v2") + "((" + pk::str("storage") +
                                pk::global("torch", "FloatStorage") + pk::str("0") + pk::str("cpu") + "\x8a\x08" +
                                pk::le(std::uint64_t{1} << 60, 8) + "tQ" + "K\x00(K\x02t(K\x01t\x89" +
                                pk::orderedDict() + "tRu.";
    QVERIFY(errorOpening(ptArchive(claimed, {{"0", kFloats}})).contains("claims 1152921504606846976 elements"));
    // Strings, memo and stack sizes the file claims.
    const std::string longString = std::string("\x80\x02X\xff\xff\xff\xff", 7) + "abc";
    QVERIFY(errorOf([&] {
              (void)unpickleRestricted("p", std::as_bytes(std::span(longString.data(), longString.size())));
            }).contains("runs past the end"));
    const std::string memo = std::string("\x80\x02j\xff\xff\xff\x7f.", 8);
    QVERIFY(errorOf([&] {
              (void)unpickleRestricted("p", std::as_bytes(std::span(memo.data(), memo.size())));
            }).contains("read before it is written"));
    const std::string deep = std::string("\x80\x02") + std::string(kMaxPickleStack + 1, ']') + ".";
    QVERIFY(errorOf([&] {
              (void)unpickleRestricted("p", std::as_bytes(std::span(deep.data(), deep.size())));
            }).contains("stack grows past"));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    qInfo("hostile size claims refused in %.2f ms", ms);
    QVERIFY(ms < 2000);
  }

  void malformedArchivesAreRefused() {
    QVERIFY(errorOpening("not a checkpoint").contains("not a PyTorch zip checkpoint"));
    const std::string good = ptArchive(oneTensorPickle(), {{"0", kFloats}});
    QVERIFY(errorOpening(good.substr(0, good.size() - 30)).contains("zip: "));
    QVERIFY(errorOpening(testing::storedZip({{"archive/data.pkl", oneTensorPickle()}}, 8))
                .contains("is compressed (method 8)"));
    QVERIFY(errorOpening(testing::storedZip({{"archive/version", "3\n"}})).contains("no <prefix>/data.pkl"));
    const std::string truncatedPickle = oneTensorPickle().substr(0, 40);
    QVERIFY(errorOpening(ptArchive(truncatedPickle, {{"0", kFloats}})).contains("ends early"));
    const std::string list(
        "\x80\x02]q\x00h\x00"
        "a.",
        9);  // a list inside itself: a cycle, no dict of tensors
    QVERIFY(errorOpening(ptArchive(list, {})).contains("not a dict of tensors"));
    const std::string hooks =
        pk::dictPickle({{"w", pk::global("torch._utils", "_rebuild_tensor_v2") +
                                  pk::tuple({pk::tuple({pk::str("storage"), pk::global("torch", "FloatStorage"),
                                                        pk::str("../x"), pk::str("cpu"), pk::integer(4)}) +
                                                 "Q",
                                             pk::integer(0), pk::tuple({}), pk::tuple({}), "\x89", "}"}) +
                                  "R"}});
    QVERIFY(errorOpening(ptArchive(hooks, {})).contains("storage key \"../x\" is not a plain name"));
  }

  void severalStateDictsNeedAChoice() {
    const std::string tensor = pk::tensor("FloatStorage", "0", 4, 0, {4}, {1});
    const std::string inner = pk::orderedDict() + "(" + pk::str("w") + tensor + "u";
    const std::string pickle = pk::dictPickle({{"first", inner}, {"second", inner}});
    writeBytes(root() / "two.pt", ptArchive(pickle, {{"0", kFloats}}));
    const auto checkpoint = PtCheckpoint::open(root() / "two.pt");
    const QString error = errorOf([&] { (void)checkpoint->stateDict(); });
    QVERIFY2(error.contains("several state dicts (\"first\", \"second\")") && error.contains("--key"),
             qPrintable(error));
    QCOMPARE(checkpoint->stateDict("second").tensors.size(), std::size_t{1});
  }
};

SHOTCHAIN_TEST(TestPtCheckpoint, Appless)
#include "test_pt_checkpoint.moc"
