// The stock ComfyUI Wan 2.2 TI2V 5B template (UI format, positional widgets) imports as one shot with its
// start image and the family's VAE; export-comfy writes the TI2V graph back and it imports the same.
#include <QTest>

#include <nlohmann/json.hpp>

#include "comfy_families.h"
#include "golden_model_facts.h"
#include "interop/comfy_export.h"
#include "interop/comfy_import.h"
#include "models/model_set_facts.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::interop;
using Json = nlohmann::json;

namespace {

// As ComfyUI's "Wan 2.2 5B video generation" template lays it out: 10 nodes, links [id, from, slot, to, slot, type].
Json ti2vTemplate() {
  auto node = [](int id, const char* type, Json inputs, Json widgets) {
    return Json{{"id", id},
                {"type", type},
                {"inputs", std::move(inputs)},
                {"outputs", Json::array()},
                {"widgets_values", std::move(widgets)}};
  };
  auto in = [](const char* name, int link) { return Json{{"name", name}, {"type", "*"}, {"link", link}}; };
  Json nodes = Json::array();
  nodes.push_back(node(37, "UNETLoader", Json::array(), {"wan2.2_ti2v_5B_fp16.safetensors", "default"}));
  nodes.push_back(node(38, "CLIPLoader", Json::array(), {"umt5_xxl_fp8_e4m3fn_scaled.safetensors", "wan", "default"}));
  nodes.push_back(node(39, "VAELoader", Json::array(), {"wan2.2_vae.safetensors"}));
  nodes.push_back(node(48, "ModelSamplingSD3", Json::array({in("model", 1)}), {8.0}));
  nodes.push_back(
      node(6, "CLIPTextEncode", Json::array({in("clip", 2)}), {"a lighthouse on a cliff at dusk, waves below"}));
  nodes.push_back(node(7, "CLIPTextEncode", Json::array({in("clip", 3)}), {"blurry, static"}));
  nodes.push_back(node(56, "LoadImage", Json::array(), {"lighthouse.png", "image"}));
  nodes.push_back(
      node(55, "Wan22ImageToVideoLatent", Json::array({in("vae", 4), in("start_image", 5)}), {1280, 704, 121, 1}));
  nodes.push_back(node(3, "KSampler",
                       Json::array({in("model", 6), in("positive", 7), in("negative", 8), in("latent_image", 9)}),
                       {898471028164125, "randomize", 20, 5, "uni_pc", "simple", 1}));
  nodes.push_back(node(8, "VAEDecode", Json::array({in("samples", 10), in("vae", 11)}), Json::array()));
  nodes.push_back(node(57, "CreateVideo", Json::array({in("images", 12)}), {24}));
  nodes.push_back(node(58, "SaveVideo", Json::array({in("video", 13)}), {"video/ComfyUI", "auto", "auto"}));
  Json links = Json::array({{1, 37, 0, 48, 0, "MODEL"},
                            {2, 38, 0, 6, 0, "CLIP"},
                            {3, 38, 0, 7, 0, "CLIP"},
                            {4, 39, 0, 55, 0, "VAE"},
                            {5, 56, 0, 55, 1, "IMAGE"},
                            {6, 48, 0, 3, 0, "MODEL"},
                            {7, 6, 0, 3, 1, "CONDITIONING"},
                            {8, 7, 0, 3, 2, "CONDITIONING"},
                            {9, 55, 0, 3, 3, "LATENT"},
                            {10, 3, 0, 8, 0, "LATENT"},
                            {11, 39, 0, 8, 1, "VAE"},
                            {12, 8, 0, 57, 0, "IMAGE"},
                            {13, 57, 0, 58, 0, "VIDEO"}});
  return {{"last_node_id", 58}, {"last_link_id", 13}, {"nodes", nodes}, {"links", links}, {"version", 0.4}};
}

}  // namespace

class TestComfyTi2v : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void templateImportsAsOneShotWithItsStartImage() {
    ComfyImportOptions options;
    options.familyFromName = models::familyFromFileName;
    const ComfyImport imported =
        importComfyWorkflow(ti2vTemplate().dump(), "video_wan2_2_5B_ti2v.json", testing::withFamilies(options));
    QCOMPARE(imported.format, ComfyFormat::Ui);
    QCOMPARE(imported.sequence.shots.size(), std::size_t{1});
    const Shot& shot = imported.sequence.shots.front();
    QCOMPARE(shot.startImage, std::string("lighthouse.png"));
    QCOMPARE(shot.width, 1280);
    QCOMPARE(shot.height, 704);
    QCOMPARE(shot.frames, 121);
    QCOMPARE(shot.seed, std::uint64_t{898471028164125});
    QCOMPARE(shot.prompt, std::string("a lighthouse on a cliff at dusk, waves below"));
    const SequenceSettings& s = imported.sequence.settings;
    QCOMPARE(s.fps, 24.0);
    QCOMPARE(s.sampler.steps, 20);
    QCOMPARE(s.sampler.guidance, 5.0);
    QCOMPARE(s.sampler.shift, 8.0);
    QCOMPARE(s.model.dit, std::string("wan2.2_ti2v_5B_fp16.safetensors"));
    QCOMPARE(s.model.vae, std::string("wan2.2_vae.safetensors"));
    QCOMPARE(imported.models,
             std::string("Wan 2.2 TI2V-5B by its name (wan2.2_ti2v_5B_fp16.safetensors, not here to read)"));
    // Every node was used: nothing is listed as not mapped except the two outputs.
    for (const UnmappedNode& n : imported.unmapped)
      QVERIFY2(n.type == "SaveVideo" || n.type == "CreateVideo", n.type.c_str());
    bool resizeNoted = false;
    for (const std::string& note : imported.notes)
      resizeNoted = resizeNoted || note.find("Lanczos") != std::string::npos;
    QVERIFY(resizeNoted);
  }

  void exportWritesTheTi2vGraphBack() {
    const ComfyImport imported = importComfyWorkflow(ti2vTemplate().dump(), "t.json", testing::withFamilies());
    const auto ti2v = testing::goldenModelFacts("wan22_ti2v_tiny.safetensors", "wan22_vae_tiny.safetensors");
    const std::vector<ComfyShotWorkflow> out =
        exportComfyWorkflows(imported.sequence, testing::resolvedAgainst(imported.sequence, ti2v));
    QCOMPARE(out.size(), std::size_t{1});
    const Json g = Json::parse(out[0].json);
    std::map<std::string, Json> byType;
    for (const auto& [id, n] : g.items()) byType[n["class_type"].get<std::string>()] = n;
    QVERIFY(byType.contains("Wan22ImageToVideoLatent") && byType.contains("CreateVideo") &&
            byType.contains("SaveVideo"));
    QVERIFY(!byType.contains("EmptyHunyuanLatentVideo"));
    QCOMPARE(byType["LoadImage"]["inputs"]["image"].get<std::string>(), std::string("lighthouse.png"));
    QCOMPARE(byType["CreateVideo"]["inputs"]["fps"].get<double>(), 24.0);
    QCOMPARE(byType["VAELoader"]["inputs"]["vae_name"].get<std::string>(), std::string("wan2.2_vae.safetensors"));
    // The round trip gives the same shot.
    const ComfyImport again = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
    QCOMPARE(again.sequence.shots.size(), std::size_t{1});
    const Shot& a = imported.sequence.shots[0];
    const Shot& b = again.sequence.shots[0];
    QCOMPARE(b.startImage, a.startImage);
    QCOMPARE(b.seed, a.seed);
    QCOMPARE(b.frames, a.frames);
    QCOMPARE(b.width, a.width);
    QCOMPARE(again.sequence.settings.fps, 24.0);
    // The Wan 2.1 export of the same document is the text-to-video graph, which cannot take the picture.
    const std::vector<ComfyShotWorkflow> t2v = exportComfyWorkflows(
        imported.sequence,
        testing::resolvedAgainst(imported.sequence,
                                 testing::goldenModelFacts("wan_dit_tiny.safetensors", "wan_vae_tiny.safetensors")));
    QVERIFY(t2v[0].json.find("EmptyHunyuanLatentVideo") != std::string::npos);
    QVERIFY(!t2v[0].notes.empty());
  }
};

SHOTCHAIN_TEST(TestComfyTi2v, Appless)
#include "test_comfy_ti2v.moc"
