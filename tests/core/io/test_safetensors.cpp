#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "malformed_corpus.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::io;

namespace {

void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::filesystem::path goldenDir() { return SHOTCHAIN_GOLDEN_DIR; }

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void roundTripEveryDtype() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "all.safetensors";
    const at::Tensor base = at::arange(12, at::kDouble).reshape({3, 4}).sub(5.5);
    NamedTensors tensors;
    for (const at::ScalarType type : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kChar, at::kShort,
                                      at::kInt, at::kLong, at::kByte, at::kBool})
      tensors.emplace_back(std::string("t_") + c10::toString(type), base.to(type));
    tensors.emplace_back("scalar", at::full({}, 3.25, at::kFloat));
    tensors.emplace_back("empty", at::empty({0, 5}, at::kFloat));
    tensors.emplace_back("strided", base.t().to(at::kFloat));  // non-contiguous input
    saveSafetensors(path, tensors, {{"format", "test"}, {"note", "ü"}});

    const auto file = SafetensorsFile::open(path);
    QCOMPARE(file->header().tensors.size(), tensors.size());
    QCOMPARE(file->header().metadata.at("note"), std::string("ü"));
    QVERIFY(file->header().dataOffset % 8 == 0);
    for (const auto& [name, expected] : tensors) {
      const at::Tensor got = file->tensor(name);
      QVERIFY2(got.scalar_type() == expected.scalar_type(), name.c_str());
      QVERIFY2(got.sizes() == expected.sizes(), name.c_str());
      QVERIFY2(at::equal(got, expected), name.c_str());
    }
    // Aligned tensors are views of the mapping: every element naturally aligned by the writer.
    for (const TensorEntry& entry : file->header().tensors)
      QVERIFY((file->header().dataOffset + entry.begin) % std::max(1u, dtypeBits(entry.dtype) / 8) == 0);
  }

  void viewsOutliveTheFileObject() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "v.safetensors";
    const at::Tensor value = at::randn({64, 33});
    saveSafetensors(path, {{"w", value}});
    at::Tensor view;
    {
      const auto file = SafetensorsFile::open(path);
      view = file->tensor("w");
    }
    std::filesystem::remove(path);
    QVERIFY(at::equal(view, value));
    view.mul_(2);  // copy-on-write mapping: writable, never reaches the file
    QVERIFY(at::allclose(view, value * 2));
  }

  void unalignedTensorsAreCopied() {
    // F32 tensor at buffer offset 1 (after a U8): legal in the format, must be copied.
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "unaligned.safetensors";
    std::string header =
        R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"f":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes = testing::safetensorsBytes(header, 0);
    bytes.push_back('\x07');
    const float values[2] = {1.5f, -2.0f};
    bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
    writeBytes(path, bytes);
    const auto file = SafetensorsFile::open(path);
    const at::Tensor f = file->tensor("f");
    QCOMPARE(f[0].item<float>(), 1.5f);
    QCOMPARE(f[1].item<float>(), -2.0f);
    QCOMPARE(file->tensor("b").item<std::uint8_t>(), std::uint8_t{7});
    QCOMPARE(file->tensor("f", at::kDouble).scalar_type(), at::kDouble);
  }

  void malformed_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QString>("expected");
    const auto corpus = testing::malformedCorpus();
    QVERIFY(corpus.size() >= 30);
    for (const auto& c : corpus)
      QTest::newRow(c.name.c_str()) << QByteArray(c.bytes.data(), static_cast<qsizetype>(c.bytes.size()))
                                    << QString::fromStdString(c.name) << QString::fromStdString(c.expected);
  }

  void malformed() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, fileName);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / fileName.toStdString();
    writeBytes(path, bytes.toStdString());
    try {
      (void)SafetensorsFile::open(path);
      QFAIL(qPrintable("accepted a malformed file: " + fileName));
    } catch (const SafetensorsError& error) {
      const QString message = QString::fromUtf8(error.what());
      QVERIFY2(message.startsWith(fileName + ": "), qPrintable("message does not name the file: " + message));
      QVERIFY2(message.contains(expected), qPrintable("expected \"" + expected + "\" in: " + message));
    }
  }

  void validMinimalFiles() {
    QTemporaryDir dir;
    const auto root = std::filesystem::path(dir.path().toStdString());
    // Leading/trailing JSON whitespace is accepted; an empty object with no data is a valid file.
    writeBytes(root / "ws.safetensors", testing::safetensorsBytes("  {}    ", 0));
    QCOMPARE(SafetensorsFile::open(root / "ws.safetensors")->header().tensors.size(), std::size_t{0});
    // Zero-element tensors are fine anywhere.
    writeBytes(root / "zero.safetensors",
               testing::safetensorsBytes(R"({"z":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}})", 0));
    QCOMPARE(SafetensorsFile::open(root / "zero.safetensors")->tensor("z").numel(), std::int64_t{0});
  }

  void picklesAreRefused() {
    QTemporaryDir dir;
    for (const char* name : {"Wan2.1_VAE.pth", "model.pt", "x.ckpt"}) {
      const auto path = std::filesystem::path(dir.path().toStdString()) / name;
      writeBytes(path, "PK\x03\x04 not read");
      try {
        (void)SafetensorsFile::open(path);
        QFAIL("pickle accepted");
      } catch (const SafetensorsError& error) {
        const QString message = QString::fromUtf8(error.what());
        QVERIFY2(message.startsWith(QString(name) + ": "), qPrintable(message));
        QVERIFY2(message.contains("safetensors form"), qPrintable(message));
      }
    }
  }

  void missingFileNamesIt() {
    try {
      (void)SafetensorsFile::open("/nonexistent/dir/w.safetensors");
      QFAIL("opened a missing file");
    } catch (const SafetensorsError& error) {
      QVERIFY2(QString(error.what()).startsWith("w.safetensors: cannot open"), error.what());
    }
  }

  void unknownTensorNameIsReported() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "n.safetensors";
    saveSafetensors(path, {{"a", at::ones({2})}});
    try {
      (void)SafetensorsFile::open(path)->tensor("b");
      QFAIL("no error");
    } catch (const SafetensorsError& error) {
      QVERIFY2(QString(error.what()).contains("n.safetensors: tensor \"b\": not in this file"), error.what());
    }
  }

  void writerRejectsDuplicatesAndIsAtomic() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "d.safetensors";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             saveSafetensors(path, {{"a", at::ones({1})}, {"a", at::ones({1})}}));
    QVERIFY(!std::filesystem::exists(path));
    saveSafetensors(path, {{"a", at::ones({1})}});
    QCOMPARE(std::distance(std::filesystem::directory_iterator(path.parent_path()), {}), std::ptrdiff_t{1});
  }

  void goldenFilesLoad() {
    const auto dir = goldenDir();
    if (!std::filesystem::is_directory(dir))
      QFAIL(qPrintable("golden folder missing: " + QString::fromStdString(dir.string())));
    for (const char* name : {"wan_dit_tiny.safetensors", "wan_dit_tiny_io.safetensors", "wan_vae_tiny.safetensors",
                             "umt5_tiny.safetensors", "schedule_io.safetensors"}) {
      const auto file = SafetensorsFile::open(dir / name);
      QCOMPARE(file->header().metadata.at("format"), std::string("wan-golden-v1"));
      for (const TensorEntry& entry : file->header().tensors) {
        const at::Tensor t = file->tensor(entry);
        QCOMPARE(static_cast<std::uint64_t>(t.numel()), entry.elements);
      }
    }
    const auto dit = SafetensorsFile::open(dir / "wan_dit_tiny.safetensors");
    QCOMPARE(dit->header().tensors.size(), std::size_t{69});
    QVERIFY(dit->tensor("blocks.0.modulation").sizes() == at::IntArrayRef({1, 6, 64}));
    const auto schedule = SafetensorsFile::open(dir / "schedule_io.safetensors");
    const at::Tensor steps = schedule->tensor("unipc.steps10.shift5.timesteps");
    QCOMPARE(steps.scalar_type(), at::kLong);
    QCOMPARE(steps[0].item<std::int64_t>(), std::int64_t{999});
    QCOMPARE(steps[9].item<std::int64_t>(), std::int64_t{356});
  }
};

SHOTCHAIN_TEST(TestSafetensors, Appless)
#include "test_safetensors.moc"
