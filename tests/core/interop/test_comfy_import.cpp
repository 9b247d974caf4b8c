#include <QTemporaryDir>
#include <QTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "comfy_families.h"
#include "comfy_test_workflows.h"
#include "interop/comfy_export.h"
#include "interop/comfy_import.h"
#include "interop/comfy_model_words.h"
#include "models/model_set_facts.h"
#include "resolve/resolve_sequence.h"
#include "sequence/sequence_io.h"
#include "sequence/validation.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::interop;
using Json = nlohmann::json;
using testing::api;
using testing::from;
using testing::importErrorOf;
using testing::seedPackWorkflow;

namespace {

// The stock Wan text-to-video graph in the UI format (nodes with positional widgets_values, a links
// table), with a reroute on the VAE's way and a note.
Json stockUiWorkflow() {
  auto node = [](int id, const char* type, Json inputs, Json widgets) {
    return Json{{"id", id},
                {"type", type},
                {"inputs", std::move(inputs)},
                {"outputs", Json::array()},
                {"widgets_values", std::move(widgets)}};
  };
  auto in = [](const char* name, int link) { return Json{{"name", name}, {"type", "*"}, {"link", link}}; };
  Json nodes = Json::array();
  nodes.push_back(node(37, "UNETLoader", Json::array(), {"wan2.1_t2v_1.3B_fp16.safetensors", "default"}));
  nodes.push_back(node(38, "CLIPLoader", Json::array(), {"umt5_xxl_fp8_e4m3fn_scaled.safetensors", "wan", "default"}));
  nodes.push_back(node(39, "VAELoader", Json::array(), {"wan_2.1_vae.safetensors"}));
  nodes.push_back(node(48, "ModelSamplingSD3", Json::array({in("model", 1)}), {8}));
  nodes.push_back(node(6, "CLIPTextEncode", Json::array({in("clip", 2)}), {"a fox running through snow"}));
  nodes.push_back(node(7, "CLIPTextEncode", Json::array({in("clip", 3)}), {"still, blurry"}));
  nodes.push_back(node(40, "EmptyHunyuanLatentVideo", Json::array(), {832, 480, 33, 1}));
  nodes.push_back(node(3, "KSampler",
                       Json::array({in("model", 4), in("positive", 5), in("negative", 6), in("latent_image", 7)}),
                       {82628696717253, "randomize", 30, 6, "uni_pc", "simple", 1}));
  nodes.push_back(node(50, "Reroute", Json::array({in("", 8)}), Json::array()));
  nodes.push_back(node(8, "VAEDecode", Json::array({in("samples", 9), in("vae", 10)}), Json::array()));
  nodes.push_back(node(28, "SaveAnimatedWEBP", Json::array({in("images", 11)}), {"ComfyUI", 16, false, 90, "default"}));
  nodes.push_back(node(60, "Note", Json::array(), {"fox test"}));
  const Json links = Json::array({Json::array({1, 37, 0, 48, 0, "MODEL"}), Json::array({2, 38, 0, 6, 0, "CLIP"}),
                                  Json::array({3, 38, 0, 7, 0, "CLIP"}), Json::array({4, 48, 0, 3, 0, "MODEL"}),
                                  Json::array({5, 6, 0, 3, 1, "CONDITIONING"}),
                                  Json::array({6, 7, 0, 3, 2, "CONDITIONING"}), Json::array({7, 40, 0, 3, 3, "LATENT"}),
                                  Json::array({8, 39, 0, 50, 0, "VAE"}), Json::array({9, 3, 0, 8, 0, "LATENT"}),
                                  Json::array({10, 50, 0, 8, 1, "VAE"}), Json::array({11, 8, 0, 28, 0, "IMAGE"})});
  return {{"last_node_id", 60}, {"last_link_id", 11}, {"nodes", nodes}, {"links", links}, {"version", 0.4}};
}

bool unmappedHas(const ComfyImport& r, const std::string& id, const std::string& type) {
  for (const UnmappedNode& n : r.unmapped)
    if (n.id == id && n.type == type) return true;
  return false;
}

}  // namespace

class TestComfyImport : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void apiFormatWithTheSeedPackNodes() {
    const ComfyImport r = importComfyWorkflow(seedPackWorkflow().dump(), "wf.json", testing::withFamilies());
    QCOMPARE(r.format, ComfyFormat::Api);
    const Sequence& s = r.sequence;
    QCOMPARE(s.shots.size(), std::size_t{2});
    QCOMPARE(s.shots[0].prompt, std::string("a red circle moving right on a black background"));
    QCOMPARE(s.shots[0].negativePrompt, std::string("blurry"));
    QCOMPARE(s.shots[0].seed, std::uint64_t{1001});
    QCOMPARE(s.shots[0].frames, 17);
    QCOMPARE(s.shots[0].continuity.mode, ContinuityMode::None);
    QCOMPARE(s.shots[0].continuity.tag, std::string("circle"));
    QCOMPARE(s.shots[1].prompt, std::string("a red circle moving down on a black background"));
    QCOMPARE(s.shots[1].seed, std::uint64_t{1002});
    QCOMPARE(s.shots[1].continuity.mode, ContinuityMode::Latent);
    QCOMPARE(s.shots[1].continuity.tag, std::string("circle"));
    QCOMPARE(s.settings.sampler.steps, 20);
    QCOMPARE(s.settings.sampler.guidance, 4.0);
    QCOMPARE(s.settings.sampler.shift, 3.0);
    QCOMPARE(s.settings.sampler.solver, Solver::UniPC);
    QCOMPARE(s.settings.policy, ResidencyPolicy::Pinned);
    QVERIFY(!s.settings.allocatorTuning);
    QCOMPARE(s.settings.fps, 16.0);
    QCOMPARE(s.settings.model.dit, std::string("wan2.1_t2v_1.3B_fp16.safetensors"));
    QCOMPARE(s.settings.model.vae, std::string("wan_2.1_vae.safetensors"));
    QVERIFY(unmappedHas(r, "17", "LoraLoaderModelOnly"));
    QVERIFY(unmappedHas(r, "16", "SaveAnimatedWEBP"));
    QCOMPARE(r.unmapped.size(), std::size_t{2});
    bool scheduler = false, files = false;
    for (const std::string& note : r.notes) {
      scheduler = scheduler || note.find("karras") != std::string::npos;
      files = files || note.find("no models folder") != std::string::npos;
    }
    QVERIFY(scheduler && files);
    QVERIFY(!hasErrors(validateSequence(s)));
  }

  void uiFormatStockGraph() {
    const ComfyImport r = importComfyWorkflow(stockUiWorkflow().dump(), "fox.json", testing::withFamilies());
    QCOMPARE(r.format, ComfyFormat::Ui);
    QCOMPARE(r.sequence.shots.size(), std::size_t{1});
    const Shot& shot = r.sequence.shots[0];
    QCOMPARE(shot.prompt, std::string("a fox running through snow"));
    QCOMPARE(shot.negativePrompt, std::string("still, blurry"));
    QCOMPARE(shot.seed, std::uint64_t{82628696717253});
    QCOMPARE(shot.width, 832);
    QCOMPARE(shot.height, 480);
    QCOMPARE(shot.frames, 33);
    QCOMPARE(r.sequence.settings.sampler.steps, 30);
    QCOMPARE(r.sequence.settings.sampler.guidance, 6.0);
    QCOMPARE(r.sequence.settings.sampler.shift, 8.0);
    QCOMPARE(r.sequence.settings.model.vae, std::string("wan_2.1_vae.safetensors"));  // through the reroute
    QVERIFY(unmappedHas(r, "60", "Note"));
    QVERIFY(unmappedHas(r, "28", "SaveAnimatedWEBP"));
    QVERIFY(!unmappedHas(r, "50", "Reroute"));
  }

  // Loader names found in a ComfyUI models folder become the document's folder and relative files.
  void loaderNamesResolveInTheModelsFolder() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    for (const char* file : {"diffusion_models/wan2.1_t2v_1.3B_fp16.safetensors", "vae/wan_2.1_vae.safetensors",
                             "text_encoders/umt5_xxl_fp8_e4m3fn_scaled.safetensors"}) {
      std::filesystem::create_directories((root / file).parent_path());
      std::ofstream(root / file) << "x";
    }
    ComfyImportOptions options;
    options.modelFolders = {root};
    const ComfyImport r = importComfyWorkflow(seedPackWorkflow().dump(), "wf.json", testing::withFamilies(options));
    const ModelSet& m = r.sequence.settings.model;
    QVERIFY(!m.isBuiltin());
    QCOMPARE(m.folder, root.string());
    QCOMPARE(m.dit, std::string("diffusion_models/wan2.1_t2v_1.3B_fp16.safetensors"));
    QCOMPARE(m.textEncoder, std::string("text_encoders/umt5_xxl_fp8_e4m3fn_scaled.safetensors"));
    for (const std::string& note : r.notes) QVERIFY2(note.find("model files") == std::string::npos, note.c_str());
    QVERIFY(importComfyWorkflow(seedPackWorkflow("builtin:demo").dump(), "wf.json", testing::withFamilies())
                .sequence.settings.model.isBuiltin());

    // A file the folder lacks: the note says which file goes into which subfolder, the others are not named.
    std::filesystem::remove(root / "vae/wan_2.1_vae.safetensors");
    const ComfyImport missing =
        importComfyWorkflow(seedPackWorkflow().dump(), "wf.json", testing::withFamilies(options));
    QCOMPARE(missing.sequence.settings.model.folder, root.string());
    bool named = false;
    for (const std::string& note : missing.notes) {
      QVERIFY2(note.find("wan2.1_t2v_1.3B_fp16") == std::string::npos, note.c_str());
      named = named || note == "model file wan_2.1_vae.safetensors is not in " + root.string() + ": put it in " +
                                   (root / "vae").string() + " before rendering";
    }
    QVERIFY(named);
    // The files that are there keep their subfolders, the missing one is written where the note says to put it:
    // putting it there is all the document needs (no second import).
    const ModelSet& kept = missing.sequence.settings.model;
    QCOMPARE(kept.dit, std::string("diffusion_models/wan2.1_t2v_1.3B_fp16.safetensors"));
    QCOMPARE(kept.textEncoder, std::string("text_encoders/umt5_xxl_fp8_e4m3fn_scaled.safetensors"));
    QCOMPARE(kept.vae, std::string("vae/wan_2.1_vae.safetensors"));

    // Of two folders, the one holding more of the files is taken.
    QTemporaryDir other;
    const std::filesystem::path second = other.path().toStdString();
    std::filesystem::create_directories(second / "unet");
    std::ofstream(second / "unet/wan2.1_t2v_1.3B_fp16.safetensors") << "x";
    options.modelFolders = {second, root};
    const ComfyImport two = importComfyWorkflow(seedPackWorkflow().dump(), "wf.json", testing::withFamilies(options));
    QCOMPARE(two.sequence.settings.model.folder, root.string());
  }

  void badWorkflowsAreCleanErrorsNamingTheNode() {
    QVERIFY(importErrorOf("{\"nodes\": [").contains("wf.json: not JSON"));
    QVERIFY(importErrorOf("[1, 2]").contains("JSON object"));
    QVERIFY(importErrorOf("{\"1\": {\"inputs\": {}}}").contains("node 1 has no class_type"));
    Json cycle = seedPackWorkflow();
    cycle["5"]["inputs"]["model"] = from(9);
    cycle["9"]["inputs"]["model"] = from(5);
    QVERIFY2(importErrorOf(cycle.dump()).contains("cycle through node 5 (ModelSamplingSD3)"),
             qPrintable(importErrorOf(cycle.dump())));
    Json lora = seedPackWorkflow();
    lora["5"]["inputs"]["model"] = from(17);
    lora["17"]["inputs"]["model"] = from(18);
    lora["18"] = {{"class_type", "LoraStackPlus"}, {"inputs", {{"model", from(1)}}}};
    QVERIFY2(importErrorOf(lora.dump()).contains("comes from LoraStackPlus 18"),
             qPrintable(importErrorOf(lora.dump())));
    Json dangling = seedPackWorkflow();
    dangling["9"]["inputs"]["positive"] = from(99);
    QVERIFY(importErrorOf(dangling.dump()).contains("linked to node 99"));
    Json noSampler = seedPackWorkflow();
    noSampler.erase("9");
    noSampler.erase("13");
    noSampler.erase("10");
    noSampler.erase("11");
    noSampler.erase("14");
    noSampler.erase("15");
    noSampler.erase("16");
    QVERIFY(importErrorOf(noSampler.dump()).contains("no KSampler"));
    Json badMode = seedPackWorkflow();
    badMode["12"]["inputs"]["continuity_mode"] = "teleport";
    badMode["9"]["inputs"]["cfg"] = "strong";
    const QString both = importErrorOf(badMode.dump());  // neither sampler imports: both problems are named
    QVERIFY2(both.contains("no shot could be imported: KSampler 9: \"cfg\" is \"strong\", not a number") &&
                 both.contains("; KSampler 13: ZeroCopyLatentHandoff 12: continuity_mode \"teleport\""),
             qPrintable(both));
  }

  // A sampler that cannot be carried over is left out and named, with why; the rest imports, and the
  // message names the model family (here from the file name: the file is not on this machine).
  void aSamplerThatCannotBeMappedIsLeftOutAndNamed() {
    Json workflow = seedPackWorkflow("wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors");
    workflow["12"]["inputs"]["continuity_mode"] = "teleport";
    ComfyImportOptions options;
    options.familyFromName = models::familyFromFileName;
    const ComfyImport r = importComfyWorkflow(workflow.dump(), "wf.json", testing::withFamilies(options));
    QCOMPARE(r.sequence.shots.size(), std::size_t{1});
    QCOMPARE(r.sequence.shots[0].seed, std::uint64_t{1001});
    QCOMPARE(r.problems.size(), std::size_t{1});
    QVERIFY2(r.problems[0].find("KSampler 13: ZeroCopyLatentHandoff 12: continuity_mode \"teleport\"") == 0,
             r.problems[0].c_str());
    QVERIFY(!unmappedHas(r, "13", "KSampler"));  // listed once, as a problem
    QCOMPARE(
        r.models,
        std::string("Wan 2.2 T2V-A14B low-noise expert by its name (wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors, "
                    "not here to read)"));
    QCOMPARE(models::familyFromFileName("wan2.1_t2v_1.3B_fp16.safetensors"), std::string("Wan 2.1 T2V-1.3B"));
    QCOMPARE(models::familyFromFileName("wan2.2_i2v_high_noise_14B_fp16.safetensors"),
             std::string("Wan 2.2 I2V-A14B high-noise expert"));
    QCOMPARE(models::familyFromFileName("Wan2.2-TI2V-5B.safetensors"), std::string("Wan 2.2 TI2V-5B"));
    QCOMPARE(
        models::familyFromFileName("wan2.1_i2v_480p_14B_fp16.safetensors").find("not supported") != std::string::npos,
        true);
    QCOMPARE(models::familyFromFileName("juggernaut_xl.safetensors"), std::string());
  }

  // LoraLoaderModelOnly / LoraLoader between the loader and the sampler become the shot's LoRAs,
  // found under the models folder's loras/, and export-comfy writes them back.
  void loraLoadersBecomeTheShotsLoras() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    std::filesystem::create_directories(root / "loras");
    std::ofstream(root / "loras" / "style.safetensors") << "x";
    Json g = seedPackWorkflow();
    g["5"]["inputs"]["model"] = from(17);
    g["17"]["inputs"]["model"] = from(18);
    g["18"] = {{"class_type", "LoraLoader"},
               {"inputs",
                {{"lora_name", "lightx2v_4step.safetensors"},
                 {"strength_model", 1.0},
                 {"strength_clip", 1.0},
                 {"model", from(1)},
                 {"clip", from(2)}}}};
    g["6"]["inputs"]["clip"] = from(18, 1);
    ComfyImportOptions options;
    options.modelFolders = {root};
    const ComfyImport r = importComfyWorkflow(g.dump(), "wf.json", testing::withFamilies(options));
    const Shot& shot = r.sequence.shots[0];
    QVERIFY(shot.loras.has_value());
    QCOMPARE(shot.loras->size(), std::size_t{2});
    QCOMPARE((*shot.loras)[0].file,
             std::string("lightx2v_4step.safetensors"));  // not in the folder: the name, with a note
    QCOMPARE((*shot.loras)[1].file, (root / "loras" / "style.safetensors").lexically_normal().string());
    QCOMPARE((*shot.loras)[1].strength, 0.8);
    bool clipNote = false, missingNote = false;
    for (const std::string& note : r.notes) {
      clipNote = clipNote || note.find("strength_clip is not applied") != std::string::npos;
      missingNote = missingNote || note.find("LoRA lightx2v_4step.safetensors: not found") != std::string::npos;
    }
    QVERIFY(clipNote && missingNote);

    const std::vector<ComfyShotWorkflow> out =
        exportComfyWorkflows(r.sequence, resolve::resolveSequence(r.sequence, {}));
    const ComfyImport back = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
    QVERIFY(back.sequence.shots[0].loras.has_value());
    QCOMPARE(back.sequence.shots[0].loras->size(), std::size_t{2});
    QCOMPARE((*back.sequence.shots[0].loras)[1].file, std::string("style.safetensors"));
    QCOMPARE((*back.sequence.shots[0].loras)[1].strength, 0.8);
  }

  void blendHandoffTakesTheFallbackImage() {
    Json g = seedPackWorkflow();
    g["20"] = api("LoadImage", {{"image", "frame.png"}, {"upload", "image"}});
    g["12"]["inputs"]["continuity_mode"] = "blend_with_fallback";
    g["12"]["inputs"]["blend_ratio"] = 0.25;
    g["12"]["inputs"]["fallback_first_frame"] = from(20);
    const Shot shot = importComfyWorkflow(g.dump(), "wf.json", testing::withFamilies()).sequence.shots[1];
    QCOMPARE(shot.continuity.mode, ContinuityMode::Blend);
    QCOMPARE(shot.continuity.blendRatio, 0.25);
    QCOMPARE(shot.continuity.fallbackImage, std::string("frame.png"));
  }

  // ComfyUI-GGUF's loaders (UI format, and ComfyUI-MultiGPU's DisTorch copy in the API format with its extra fields)
  // give the DiT; a .gguf DiT is exported through UnetLoaderGGUF with a note, and that graph reads back.
  void ggufLoadersGiveTheDit() {
    Json ui = stockUiWorkflow();
    for (Json& n : ui["nodes"])
      if (n["type"] == "UNETLoader") {
        n["type"] = "UnetLoaderGGUFAdvanced";
        n["widgets_values"] = {"wan2.1-t2v-1.3b-Q4_K_M.gguf", "default", "bfloat16", true};
      }
    const ComfyImport fromUi = importComfyWorkflow(ui.dump(), "gguf.json", testing::withFamilies());
    QCOMPARE(fromUi.sequence.settings.model.dit, std::string("wan2.1-t2v-1.3b-Q4_K_M.gguf"));
    bool noted = false;
    for (const std::string& note : fromUi.notes)
      noted = noted || (note.find("patch_dtype, patch_on_device left to the memory plan") != std::string::npos);
    QVERIFY(noted);

    Json api = seedPackWorkflow();
    for (auto& [id, n] : api.items())
      if (n["class_type"] == "UNETLoader")
        n = Json{{"class_type", "UnetLoaderGGUFDisTorchMultiGPU"},
                 {"inputs",
                  {{"unet_name", "wan2.1-t2v-1.3b-Q8_0.gguf"},
                   {"device", "cuda:0"},
                   {"virtual_vram_gb", 4.0},
                   {"use_other_vram", false}}}};
    const ComfyImport fromApi = importComfyWorkflow(api.dump(), "distorch.json", testing::withFamilies());
    QCOMPARE(fromApi.sequence.settings.model.dit, std::string("wan2.1-t2v-1.3b-Q8_0.gguf"));
    QVERIFY(!unmappedHas(fromApi, "1", "UnetLoaderGGUFDisTorchMultiGPU"));

    Sequence sequence = fromApi.sequence;
    const std::vector<ComfyShotWorkflow> out = exportComfyWorkflows(sequence, resolve::resolveSequence(sequence, {}));
    const Json graph = Json::parse(out.front().json);
    bool gguf = false;
    for (const auto& [id, n] : graph.items())
      gguf = gguf || (n["class_type"] == "UnetLoaderGGUF" && n["inputs"]["unet_name"] == "wan2.1-t2v-1.3b-Q8_0.gguf");
    QVERIFY(gguf);
    bool told = false;
    for (const std::string& note : out.front().notes) told = told || note.find("ComfyUI-GGUF") != std::string::npos;
    QVERIFY(told);
    const ComfyImport back = importComfyWorkflow(out.front().json, "back.json", testing::withFamilies());
    QCOMPARE(back.sequence.settings.model.dit, std::string("wan2.1-t2v-1.3b-Q8_0.gguf"));
  }

  // export-comfy's stock graphs read back with the same prompts, seeds, sizes and sampler.
  void exportedShotsImportBack() {
    const Sequence demo = *loadSequenceFile(testing::workflow("demo.json")).sequence;
    const std::vector<ComfyShotWorkflow> out =
        exportComfyWorkflows(demo, resolve::resolveSequence(demo, {testing::workflow("demo.json").parent_path()}));
    QCOMPARE(out.size(), demo.shots.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      QCOMPARE(out[i].shotId, demo.shots[i].id);
      QCOMPARE(out[i].notes.empty(), false);  // builtin files, and continuity after the first
      const ComfyImport back = importComfyWorkflow(out[i].json, out[i].shotId, testing::withFamilies());
      QCOMPARE(back.sequence.shots.size(), std::size_t{1});
      const Shot& shot = back.sequence.shots[0];
      QCOMPARE(shot.prompt, demo.shots[i].prompt);
      QCOMPARE(shot.seed, demo.shots[i].seed);
      QCOMPARE(shot.frames, demo.shots[i].frames);
      QCOMPARE(shot.width, demo.shots[i].width);
      QCOMPARE(back.sequence.settings.sampler.steps, demo.settings.sampler.steps);
      QCOMPARE(back.sequence.settings.sampler.shift, demo.settings.sampler.shift);
      QVERIFY(back.unmapped.size() == 1 && back.unmapped[0].type == "SaveAnimatedWEBP");
    }
    const std::vector<std::string> mapped = mappedComfyNodeTypes(testing::withFamilies().families);
    for (const char* type : {"KSampler", "ZeroCopyLatentHandoff", "ZeroCopyVRAMPin", "ZeroCopyLatentStore",
                             "WanImageToVideo", "UnetLoaderGGUF", "UnetLoaderGGUFDisTorch2MultiGPU"})
      QVERIFY(std::find(mapped.begin(), mapped.end(), type) != mapped.end());
  }
};

SHOTCHAIN_TEST(TestComfyImport, Core)
#include "test_comfy_import.moc"
