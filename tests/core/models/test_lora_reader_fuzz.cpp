// The LoRA reader under mutated files: seeded from a good safetensors LoRA (with alphas) and the golden .pt LoRA,
// thousands of files with bytes flipped, set to edge values, cut short, repeated or inserted (half of them in the
// header) go through the real reader as a render calls it. Each is read, or refused with a LoraError or
// SafetensorsError naming the file; nothing else may escape, and what is read is finite and fits the DiT.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <typeinfo>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "io/safetensors_header.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/lora/lora_file.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::golden;

class TestLoraReaderFuzz : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  std::filesystem::path path(const std::string& name) const {
    return std::filesystem::path(dir_.path().toStdString()) / name;
  }

  static std::string mutated(std::string bytes, std::mt19937_64& random) {
    const auto pick = [&random](std::size_t n) { return n == 0 ? std::size_t{0} : std::size_t(random() % n); };
    std::uint64_t header = 0;
    for (int i = 7; i >= 0 && bytes.size() >= 8; --i) header = (header << 8) | static_cast<unsigned char>(bytes[i]);
    const std::size_t focus = random() % 2 == 0 && header + 8 <= bytes.size() ? header + 8 : bytes.size();
    const int edits = 1 + static_cast<int>(random() % 8);
    static const unsigned char edges[] = {0x00, 0xff, 0x7f, 0x80, '"', '[', ']', '{', '}', ',', ':', '-', '9', 'e'};
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const std::size_t at = pick(std::min(focus, bytes.size()));
      switch (random() % 6) {
        case 0:
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
          break;
        case 1:
          bytes[at] = static_cast<char>(edges[pick(sizeof edges)]);
          break;
        case 2:
          bytes.resize(pick(bytes.size()));
          break;
        case 3:
          bytes.insert(at, bytes.substr(pick(bytes.size()), 1 + pick(64)));
          break;
        case 4:
          bytes.erase(at, 1 + pick(16));
          break;
        default:  // a float32 value in the data set to NaN, Inf or a huge number
          if (at + 4 <= bytes.size()) {
            const float values[] = {std::nanf(""), INFINITY, -INFINITY, 3e38f};
            std::memcpy(bytes.data() + at, &values[pick(4)], 4);
          }
      }
    }
    return bytes;
  }

 private Q_SLOTS:
  void everyMutatedFileIsReadOrRefusedByName() {
    const io::WeightSet weights = io::WeightSet::open(golden("wan_dit_tiny.safetensors"));
    const WanModel model = WanModel::load(weights, WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto});
    WeightShapes shapes;
    for (const auto& [name, tensor] : model.namedParameters()) shapes.emplace_back(name, tensor.sizes().vec());

    io::NamedTensors tensors;
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(3);
    for (const char* p : {"q", "k"}) {
      const std::string layer = std::string("diffusion_model.blocks.0.self_attn.") + p;
      tensors.emplace_back(layer + ".lora_down.weight", at::randn({2, 64}, g));
      tensors.emplace_back(layer + ".lora_up.weight", at::randn({64, 2}, g));
      tensors.emplace_back(layer + ".alpha", at::full({}, 1.0));
    }
    tensors.emplace_back("diffusion_model.blocks.1.norm3.diff", at::randn({64}, g));
    io::saveSafetensors(path("seed.safetensors"), tensors);
    const std::vector<std::pair<std::string, std::string>> seeds = {
        {".safetensors", testing::readFile(path("seed.safetensors"))},
        {".pt", testing::readFile(golden("lora_tiny.pt"))}};
    for (const auto& [extension, bytes] : seeds) {
      testing::writeFile(path("unchanged" + extension), bytes);
      QVERIFY(
          !readLoraFile(path("unchanged" + extension), shapes, model.family(), wanLoraLayerAliases()).patches.empty());
    }

    std::mt19937_64 random(20261206);
    int read = 0, refused = 0;
    constexpr int kFiles = 20000;
    for (int n = 0; n < kFiles; ++n) {
      const auto& [extension, seed] = seeds[static_cast<std::size_t>(n) % seeds.size()];
      const std::filesystem::path file = path("mutant" + extension);
      testing::writeFile(file, mutated(seed, random));
      try {
        (void)loraPatchedElements(file);
        const LoraFile lora = readLoraFile(file, shapes, model.family(), wanLoraLayerAliases());
        for (const LoraPatch& patch : lora.patches)
          for (const at::Tensor& t : {patch.up, patch.down, patch.diff})
            if (t.defined()) QVERIFY2(at::isfinite(t).all().item<bool>(), patch.target.c_str());
        ++read;
      } catch (const LoraError& e) {
        QVERIFY2(QString(e.what()).contains("mutant"), e.what());
        ++refused;
      } catch (const io::SafetensorsError& e) {
        QVERIFY2(QString(e.what()).contains("mutant"), e.what());
        ++refused;
      } catch (const std::exception& e) {
        testing::writeFile(path("escaped" + extension), testing::readFile(file));
        QFAIL(qPrintable(QString("file %1: %2 escaped the reader: %3").arg(n).arg(typeid(e).name(), e.what())));
      }
    }
    qInfo("%d mutated LoRA files: %d read, %d refused by name", kFiles, read, refused);
    QVERIFY(read > 0 && refused > 0);
  }
};

SHOTCHAIN_TEST(TestLoraReaderFuzz, Appless)
#include "test_lora_reader_fuzz.moc"
