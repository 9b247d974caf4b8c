#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;

namespace {

// Two shots of the built-in demo model in ComfyUI's API format, the second continuing the first
// through the seed pack's ZeroCopyLatentHandoff.
const char* kWorkflow = R"({
  "1": {"class_type": "UNETLoader", "inputs": {"unet_name": "builtin:demo", "weight_dtype": "default"}},
  "2": {"class_type": "CLIPLoader", "inputs": {"clip_name": "builtin:demo", "type": "wan"}},
  "3": {"class_type": "VAELoader", "inputs": {"vae_name": "builtin:demo"}},
  "4": {"class_type": "ModelSamplingSD3", "inputs": {"shift": 3.0, "model": ["1", 0]}},
  "5": {"class_type": "CLIPTextEncode", "inputs": {"text": "a red circle moving right on a black background", "clip": ["2", 0]}},
  "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "", "clip": ["2", 0]}},
  "7": {"class_type": "EmptyHunyuanLatentVideo", "inputs": {"width": 64, "height": 64, "length": 17, "batch_size": 1}},
  "8": {"class_type": "KSampler", "inputs": {"seed": 1001, "steps": 6, "cfg": 4.0, "sampler_name": "uni_pc",
        "scheduler": "simple", "denoise": 1.0, "model": ["4", 0], "positive": ["5", 0], "negative": ["6", 0],
        "latent_image": ["7", 0]}},
  "9": {"class_type": "ZeroCopyLatentStore", "inputs": {"samples": ["8", 0], "buffer_tag": "circle"}},
  "10": {"class_type": "ZeroCopyLatentHandoff", "inputs": {"clip": ["2", 0], "vae": ["3", 0],
        "prompt": "a red circle moving down on a black background", "width": 64, "height": 64, "length": 17,
        "buffer_tag": "circle", "continuity_mode": "zero_copy_latent_only", "blend_ratio": 0.5}},
  "11": {"class_type": "KSampler", "inputs": {"seed": 1002, "steps": 6, "cfg": 4.0, "sampler_name": "uni_pc",
        "scheduler": "simple", "denoise": 1.0, "model": ["4", 0], "positive": ["10", 0], "negative": ["6", 0],
        "latent_image": ["10", 1]}},
  "12": {"class_type": "VAEDecode", "inputs": {"samples": ["11", 0], "vae": ["3", 0]}},
  "13": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "4x.pth"}}
})";

}  // namespace

class CliComfy : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // import-comfy then render, headless, on the built-in demo model; export-comfy writes it back.
  void importedWorkflowRenders() {
    QTemporaryDir dir;
    const QString workflow = dir.filePath("chain.json"), sequence = dir.filePath("chain.sequence.json");
    QFile file(workflow);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(kWorkflow);
    file.close();
    const CliRun imported = runCli({"import-comfy", workflow});
    QVERIFY2(imported.exitCode == 0, qPrintable(imported.out));
    QVERIFY2(imported.out.contains("API format, 2 shots"), qPrintable(imported.out));
    QVERIFY2(imported.out.contains("not mapped: node 13 (UpscaleModelLoader)"), qPrintable(imported.out));
    QVERIFY(QFile::exists(sequence));
    const CliRun again = runCli({"import-comfy", workflow});
    QCOMPARE(again.exitCode, 1);  // never replaces a document without --force
    QVERIFY(again.err.contains("exists"));

    const QString out = dir.filePath("render");
    const CliRun render = runCli({"render", sequence, "--out", out, "--no-preview"});
    QVERIFY2(render.exitCode == 0, qPrintable(render.out));
    QVERIFY(QFile::exists(out + "/sequence.mp4"));
    QCOMPARE(QDir(out + "/shots").entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 2);

    const CliRun exported = runCli({"export-comfy", sequence, "-o", dir.filePath("comfy")});
    QVERIFY2(exported.exitCode == 0, qPrintable(exported.out));
    QVERIFY(QFile::exists(dir.filePath("comfy/01-shot-1.json")) && QFile::exists(dir.filePath("comfy/02-shot-2.json")));
    QVERIFY(exported.out.contains("continuity latent has no stock ComfyUI node"));
    const CliRun ontoFile = runCli({"export-comfy", sequence, "-o", workflow});
    QCOMPARE(ontoFile.exitCode, 1);
    QVERIFY2(ontoFile.err.contains("chain.json is not a folder; give -o a folder"), qPrintable(ontoFile.err));
    QVERIFY2(!ontoFile.err.contains("filesystem error"), qPrintable(ontoFile.err));
    const CliRun ontoWorkflow = runCli({"import-comfy", workflow, "-o", workflow, "--force"});
    QCOMPARE(ontoWorkflow.exitCode, 1);
    QVERIFY2(ontoWorkflow.err.contains("is a file this command reads"), qPrintable(ontoWorkflow.err));

    QFile broken(dir.filePath("broken.json"));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("{\"1\": {\"class_type\": \"KSampler\", \"inputs\": {\"model\": [\"1\", 0]}}}");
    broken.close();
    const CliRun refused = runCli({"import-comfy", dir.filePath("broken.json")});
    QCOMPARE(refused.exitCode, 1);
    QVERIFY2(refused.err.contains("cycle through node 1 (KSampler)"), qPrintable(refused.err));
  }

  // A workflow the importer reads but whose document would not validate: written, problems on
  // stderr, exit 3. One the importer refuses (a model name leaving the models folder): exit 1, no file.
  void importsThatDoNotValidateSayWhy() {
    QTemporaryDir dir;
    std::string text = kWorkflow;
    const std::string width = "\"width\": 64, \"height\": 64, \"length\": 17, \"batch_size\": 1";
    text.replace(text.find(width), width.size(), "\"width\": 72, \"height\": 64, \"length\": 17, \"batch_size\": 1");
    writeFile(dir.filePath("odd.json").toStdString(), text);
    const CliRun odd = runCli({"import-comfy", dir.filePath("odd.json")});
    QVERIFY2(odd.exitCode == 3, qPrintable(odd.out + odd.err));
    QVERIFY2(odd.err.contains("shots[0].width") && odd.err.contains("was written but does not validate"),
             qPrintable(odd.err));
    QVERIFY(QFile::exists(dir.filePath("odd.sequence.json")));
    QCOMPARE(runCli({"validate", dir.filePath("odd.sequence.json")}).exitCode, 1);
    const CliRun json = runCli({"import-comfy", dir.filePath("odd.json"), "--force", "--json"});
    QCOMPARE(json.exitCode, 3);
    QVERIFY2(json.out.contains("\"problems\""), qPrintable(json.out));

    text = kWorkflow;
    const std::string unet = "\"unet_name\": \"builtin:demo\"";
    text.replace(text.find(unet), unet.size(), "\"unet_name\": \"../../outside.safetensors\"");
    writeFile(dir.filePath("escape.json").toStdString(), text);
    const CliRun escape = runCli({"import-comfy", dir.filePath("escape.json"), "--models", dir.path()});
    QCOMPARE(escape.exitCode, 1);
    QVERIFY2(escape.err.contains(
                 "UNETLoader 1: \"unet_name\" is \"../../outside.safetensors\", which is not a file name inside"),
             qPrintable(escape.err));
    QVERIFY(!QFile::exists(dir.filePath("escape.sequence.json")));
  }
};

SHOTCHAIN_TEST(CliComfy, Core)
#include "test_cli_comfy.moc"
