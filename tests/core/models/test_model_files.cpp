#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "memory/memory_planner.h"
#include "model_folder.h"
#include "models/model_files.h"
#include "resolve/plan_request.h"
#include "resolve/resolve_sequence.h"
#include "runtime/torch_runtime.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;

namespace {

ModelSet folderModel(const std::string& folder = "models") {
  ModelSet model;
  model.builtin.clear();
  model.folder = folder;
  return model;
}

fs::path tempPath(const QTemporaryDir& dir) { return fs::path(dir.path().toStdString()); }

}  // namespace

class ModelFilesTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void builtinDemoUsesTheResourceDirectory() {
    QTemporaryDir dir;
    fs::create_directories(tempPath(dir) / "demo");
    writeFile(tempPath(dir) / "demo" / "latent_rgb.safetensors", "x");
    ::setenv("SHOTCHAIN_RESOURCE_DIR", dir.path().toUtf8().constData(), 1);
    const models::ModelFiles files = models::resolveModelFiles(ModelSet{}, "/nowhere");
    QCOMPARE(files.dit, tempPath(dir) / "demo" / "dit.safetensors");
    QCOMPARE(files.vae, tempPath(dir) / "demo" / "vae.safetensors");
    QCOMPARE(files.textEncoder, tempPath(dir) / "demo" / "text_encoder.safetensors");
    QVERIFY(files.tokenizer.empty());  // no tokenizer.model there: the embedded one
    QCOMPARE(files.latentRgb, tempPath(dir) / "demo" / "latent_rgb.safetensors");
    QVERIFY(files.description.starts_with("builtin:demo"));
    ::unsetenv("SHOTCHAIN_RESOURCE_DIR");
    const fs::path fallback = models::builtinModelDirectory("demo");
    QVERIFY2(fallback.filename() == "demo", fallback.c_str());
    QVERIFY(fallback != tempPath(dir) / "demo");
  }

  void aComfyFolderIsDetectedFromTheHeaders() {
    QTemporaryDir dir;
    makeModelFolder(tempPath(dir));
    const models::ModelFiles files = models::resolveModelFiles(folderModel(), tempPath(dir));
    const fs::path models = tempPath(dir) / "models";
    QCOMPARE(files.dit, models / "diffusion_models" / "wan_tiny.safetensors");
    QCOMPARE(files.vae, models / "vae" / "vae_tiny.safetensors");
    QCOMPARE(files.textEncoder, models / "text_encoders" / "umt5_tiny.safetensors");
    QVERIFY(files.tokenizer.empty());
  }

  // `shotchain models FOLDER --json`: every weights file with its role and family from its header,
  // and a file that is not a model listed with the reason (never dropped).
  void theModelsCommandListsAFolderFromHeaders() {
    QTemporaryDir dir;
    makeModelFolder(tempPath(dir));
    writeFile(tempPath(dir) / "models" / "vae" / "broken.safetensors", "not a safetensors file");
    const CliRun run = runCli({"models", QString::fromStdString((tempPath(dir) / "models").string()), "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const nlohmann::json listed =
        nlohmann::json::parse(run.out.toStdString().substr(0, run.out.toStdString().rfind(']') + 1));
    QCOMPARE(listed.size(), std::size_t{4});
    std::map<std::string, nlohmann::json> byName;
    for (const auto& entry : listed) byName[fs::path(entry["file"].get<std::string>()).filename().string()] = entry;
    QCOMPARE(byName.at("wan_tiny.safetensors")["role"].get<std::string>(), std::string("dit"));
    QVERIFY(byName.at("wan_tiny.safetensors")["model"].get<std::string>().starts_with("Wan 2.1 T2V, tiny"));
    QCOMPARE(byName.at("vae_tiny.safetensors")["role"].get<std::string>(), std::string("vae"));
    QCOMPARE(byName.at("umt5_tiny.safetensors")["role"].get<std::string>(), std::string("text_encoder"));
    QVERIFY(byName.at("umt5_tiny.safetensors")["problem"].get<std::string>().empty());
    QCOMPARE(byName.at("broken.safetensors")["role"].get<std::string>(), std::string(""));
    QVERIFY(!byName.at("broken.safetensors")["problem"].get<std::string>().empty());

    const CliRun missing = runCli({"models", QString::fromStdString((tempPath(dir) / "nowhere").string())});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("is not a folder"), qPrintable(missing.err));
  }

  // A LoRA is listed as one with what it patches; SVI's by their published names, the Wan 2.1 ones said to be
  // another condition, and a name that only contains the letters is not taken for one.
  void theModelsCommandNamesLorasAndSvisPair() {
    QTemporaryDir dir;
    const fs::path loras = tempPath(dir) / "loras";
    fs::create_directories(loras);
    for (const char* name : {"SVI_v2_PRO_Wan2.2-I2V-A14B_HIGH_lora_rank_128_fp16.pt",
                             "SVI_v2_PRO_Wan2.2-I2V-A14B_LOW_lora_rank_128_fp16.pt", "SVI_Wan2.1-I2V-14B_lora_v2.0.pt",
                             "lavish_svitzer_style.pt"})
      fs::copy_file(golden("lora_tiny.pt"), loras / name);
    const CliRun run = runCli({"models", QString::fromStdString(tempPath(dir).string()), "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    std::map<std::string, std::string> model;
    for (const auto& entry : nlohmann::json::parse(run.out.toStdString())) {
      QCOMPARE(entry["role"].get<std::string>(), std::string("lora"));
      model[fs::path(entry["file"].get<std::string>()).filename().string()] = entry["model"].get<std::string>();
    }
    QVERIFY(model.at("SVI_v2_PRO_Wan2.2-I2V-A14B_HIGH_lora_rank_128_fp16.pt")
                .ends_with("SVI 2.0 Pro for continuity svi (high-noise expert)"));
    QVERIFY(model.at("SVI_v2_PRO_Wan2.2-I2V-A14B_LOW_lora_rank_128_fp16.pt")
                .ends_with("SVI 2.0 Pro for continuity svi (low-noise expert)"));
    QVERIFY(model.at("SVI_Wan2.1-I2V-14B_lora_v2.0.pt").find("SVI for Wan 2.1") != std::string::npos);
    QCOMPARE(model.at("lavish_svitzer_style.pt"), std::string("LoRA, 8 layers, rank 4, for a Wan DiT"));
  }

  // A name can neither split a row nor colour the terminal (control characters are written escaped), and a name
  // that is not UTF-8 keeps its bytes in --json so that the entry still names the file.
  void theModelsCommandPrintsNamesSafely() {
    QTemporaryDir dir;
    const fs::path folder = tempPath(dir);
    fs::copy_file(golden("lora_tiny.pt"), folder / "a\nb\x1b[31mred.pt");
    fs::copy_file(golden("lora_tiny.pt"), folder / "lat\xe9.pt");
    const CliRun table = runCli({"models", QString::fromStdString(folder.string())});
    QVERIFY2(table.exitCode == 0, qPrintable(table.out));
    QVERIFY2(table.out.contains("a\\nb\\x1b[31mred.pt\n"), qPrintable(table.out));
    QVERIFY(!table.out.contains(QChar(0x1b)));
    QCOMPARE(table.out.count('\n'), 2);  // a row a file
    const CliRun json = runCli({"models", QString::fromStdString(folder.string()), "--json"});
    const nlohmann::json listed = nlohmann::json::parse(json.out.toStdString());
    bool hex = false;
    for (const auto& entry : listed)
      hex = hex || entry.value("file_bytes_hex", "").ends_with("6c6174e92e7074");  // "lat\xe9.pt"
    QVERIFY2(hex, json.out.toStdString().c_str());
  }

  void theOlderFolderNamesWorkToo() {
    QTemporaryDir dir;
    makeModelFolder(tempPath(dir), "unet", "clip");
    const models::ModelFiles files = models::resolveModelFiles(folderModel(), tempPath(dir));
    QCOMPARE(files.dit.parent_path().filename().string(), std::string("unet"));
    QCOMPARE(files.textEncoder.parent_path().filename().string(), std::string("clip"));
  }

  void explicitFilesAreRelativeToTheFolder() {
    QTemporaryDir dir;
    makeModelFolder(tempPath(dir));
    fs::copy_file(golden("wan_dit_tiny.safetensors"),
                  tempPath(dir) / "models" / "diffusion_models" / "second.safetensors");
    ModelSet model = folderModel();
    // Two DiTs: detection refuses to guess.
    const QString twice = errorOf([&] { models::resolveModelFiles(model, tempPath(dir)); });
    QVERIFY2(twice.startsWith("model.folder: several DiT files") && twice.contains("name one in model.dit"),
             qPrintable(twice));
    model.dit = "diffusion_models/second.safetensors";
    QCOMPARE(models::resolveModelFiles(model, tempPath(dir)).dit,
             tempPath(dir) / "models" / "diffusion_models" / "second.safetensors");
    model.dit = "diffusion_models/missing.safetensors";
    const QString missing = errorOf([&] { models::resolveModelFiles(model, tempPath(dir)); });
    QVERIFY2(missing == "model.dit: " + q((tempPath(dir) / "models/diffusion_models/missing.safetensors").string()) +
                            " does not exist",
             qPrintable(missing));
  }

  void problemsNameTheFieldAndThePath() {
    QTemporaryDir dir;
    const QString noFolder = errorOf([&] { models::resolveModelFiles(folderModel("absent"), tempPath(dir)); });
    QVERIFY2(noFolder == "model.folder: " + q((tempPath(dir) / "absent").string()) + " is not a folder",
             qPrintable(noFolder));
    makeModelFolder(tempPath(dir));
    fs::remove(tempPath(dir) / "models" / "vae" / "vae_tiny.safetensors");
    const QString noVae = errorOf([&] { models::resolveModelFiles(folderModel(), tempPath(dir)); });
    QVERIFY2(noVae.startsWith("model.folder: no usable VAE in ") && noVae.contains("model.vae"), qPrintable(noVae));
    ModelSet files;
    files.builtin.clear();
    files.dit = "dit.safetensors";
    const QString notThere = errorOf([&] { models::resolveModelFiles(files, tempPath(dir)); });
    QVERIFY2(notThere.startsWith("model.dit: ") && notThere.endsWith("does not exist"), qPrintable(notThere));
  }

  void aPlanRequestComesFromTheHeadersAlone() {
    QTemporaryDir dir;
    makeModelFolder(tempPath(dir));
    const LoadResult loaded = parseSequence(sequenceJson(R"({ "folder": "models" })"));
    QVERIFY(loaded.ok());
    const resolve::ResolvedSequence resolved = resolve::resolveSequence(*loaded.sequence, {tempPath(dir)});
    const memory::PlanRequest r = resolve::planRequest(
        resolved, loaded.sequence->settings, {"cpu", std::nullopt, std::uint64_t(1) << 30, ResidencyPolicy::Pinned});
    QCOMPARE(QString::fromStdString(r.dit->variant()), QString("tiny"));
    QCOMPARE(QString::fromStdString(r.vae->variant()), QString("tiny"));
    QCOMPARE(r.shots.size(), std::size_t(3));
    QCOMPARE(r.shots[0].frames, std::int64_t(5));
    QCOMPARE(r.shots[2].frames, std::int64_t(6));  // one overlap latent taken from the previous shot
    QCOMPARE(r.shots[0].height, std::int64_t(8));
    QCOMPARE(r.ringBufferBytes, std::uint64_t(16 * 8 * 8 * 4));  // one tag, one latent frame
    QVERIFY(r.textEncoderWeights > 0);
    QCOMPARE(r.policy, ResidencyPolicy::Pinned);
    QCOMPARE(*r.budget, std::uint64_t(1) << 30);
    QVERIFY(r.deviceTotal > 0);
    const memory::MemoryPlan plan = memory::planMemory(r);
    QVERIFY2(plan.fits, plan.reason.c_str());
  }
};

SHOTCHAIN_TEST(ModelFilesTest, Appless)
#include "test_model_files.moc"
