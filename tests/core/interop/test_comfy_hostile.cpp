// Hostile and malformed ComfyUI workflows: each case a message naming the file, node and field,
// never a crash, a raw library error or a silently changed value.
#include <QElapsedTimer>
#include <QTest>

#include <nlohmann/json.hpp>

#include "comfy_families.h"
#include "comfy_test_workflows.h"
#include "interop/comfy_export.h"
#include "interop/comfy_import.h"
#include "resolve/resolve_sequence.h"
#include "sequence/validation.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::interop;
using Json = nlohmann::json;

namespace {

using testing::api;
using testing::from;
using testing::importErrorOf;

// One text-to-video shot: the seed pack's first (the KSampler is node 9), decoded by node 11 into a
// SaveAnimatedWEBP (node 16).
Json oneShot() {
  Json g = testing::seedPackWorkflow();
  for (const char* id : {"10", "12", "13", "14", "15", "17"}) g.erase(id);
  g["16"]["inputs"]["images"] = from(11);
  return g;
}

QString errorWith(const char* node, const char* field, Json value) {
  Json g = oneShot();
  g[node]["inputs"][field] = std::move(value);
  return importErrorOf(g.dump());
}

#define EXPECT_ERROR(text, part)                                                                                 \
  do {                                                                                                           \
    const QString e_ = (text);                                                                                   \
    QVERIFY2(e_.startsWith("wf.json: ") && e_.contains(part) && !e_.contains("json.exception"), qPrintable(e_)); \
  } while (0)

std::uint64_t seedAfterImport(const std::string& seedText) {
  std::string text = oneShot().dump();
  const std::string from = "\"seed\":1001";
  text.replace(text.find(from), from.size(), "\"seed\":" + seedText);
  return importComfyWorkflow(text, "wf.json", testing::withFamilies()).sequence.shots.at(0).seed;
}

}  // namespace

class TestComfyHostile : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // When nothing imports, the error names every node of a type ShotChain does not map, also those no sampler reached
  // (a custom model patcher behind a prompt node that stopped the sampler first).
  void aWorkflowOfWhichNothingImportsNamesEveryForeignNode() {
    Json g = oneShot();
    g["6"]["class_type"] = "WanVideoTextEncode";
    g["20"] = api("PatchSageAttentionKJ", {{"model", from(1)}, {"sage_attention", "auto"}});
    g["4"]["inputs"]["model"] = from(20);
    const QString error = importErrorOf(g.dump());
    EXPECT_ERROR(error, "no shot could be imported");
    EXPECT_ERROR(error, "WanVideoTextEncode 6");
    EXPECT_ERROR(error, "node types ShotChain does not map: PatchSageAttentionKJ 20, WanVideoTextEncode 6");
  }

  void theStrictJsonReader() {
    EXPECT_ERROR(importErrorOf(std::string(200000, '[') + std::string(200000, ']')), "nested deeper than 64");
    const std::string base = oneShot().dump();
    std::string twice = base;
    twice.insert(twice.size() - 1, ",\"9\":" + oneShot()["9"].dump());
    EXPECT_ERROR(importErrorOf(twice), "duplicate key \"9\"");
    EXPECT_ERROR(importErrorOf(base + std::string(1, '\0') + "{\"junk\": 1}"), "NUL");
    std::string huge = base;
    huge.replace(huge.find("\"cfg\":4.0"), 9, "\"cfg\":1e400");
    EXPECT_ERROR(importErrorOf(huge), "9.inputs.cfg");
  }

  void wronglyTypedFieldsNameTheNodeAndField() {
    EXPECT_ERROR(errorWith("9", "steps", "twenty"),
                 "KSampler 9: \"steps\" is \"twenty\"; it must be a whole number from 1 to 1000");
    EXPECT_ERROR(errorWith("9", "steps", 2.5), "KSampler 9: \"steps\" is 2.5");
    EXPECT_ERROR(errorWith("9", "cfg", Json::array({1, 2, 3})), "KSampler 9: \"cfg\" is [1,2,3], not a number");
    EXPECT_ERROR(errorWith("4", "enable_pinning", "yes"),
                 "ZeroCopyVRAMPin 4: \"enable_pinning\" is \"yes\", not true or false");
    EXPECT_ERROR(errorWith("6", "text", 12), "CLIPTextEncode 6: \"text\" is 12, not text");
    EXPECT_ERROR(errorWith("9", "positive", Json::array({"6", -1})), "input \"positive\" slot is -1");
    Json ui = {
        {"nodes",
         Json::array({{{"id", 1}, {"type", "KSampler"}, {"inputs", Json::array({{{"name", 5}, {"link", 1}}})}}})},
        {"links", Json::array({Json::array({1, 1, "a", 1, 0, "MODEL"})})}};
    EXPECT_ERROR(importErrorOf(ui.dump()), "links[0][2] (the source slot) is \"a\"");
    ui["links"][0][2] = 0;
    EXPECT_ERROR(importErrorOf(ui.dump()), "node 1 (KSampler): inputs[0] has no name");
    ui["nodes"][0]["id"] = 1.5;
    EXPECT_ERROR(importErrorOf(ui.dump()), "nodes[0].id is 1.5; a node id is a whole number or text");
    ui["nodes"][0] = "not a node";
    EXPECT_ERROR(importErrorOf(ui.dump()), "nodes[0] is \"not a node\", not a node object");
  }

  // Every number is checked against the document's range before it becomes an int field.
  void numbersAreRangeCheckedBeforeTheyBecomeFields() {
    EXPECT_ERROR(errorWith("8", "length", 3000000000LL),
                 "EmptyHunyuanLatentVideo 8: \"length\" is 3000000000; it must be a whole number from 1 to 1025");
    EXPECT_ERROR(errorWith("8", "width", 2147483648LL),
                 "\"width\" is 2147483648; it must be a whole number from 16 to 4096");
    EXPECT_ERROR(errorWith("8", "height", -64), "\"height\" is -64");
    EXPECT_ERROR(errorWith("9", "steps", 1e10), "\"steps\" is 10000000000.0");
    EXPECT_ERROR(errorWith("9", "cfg", 1e300), "\"cfg\" is 1e+300; it must be from 0 to 50");
    EXPECT_ERROR(errorWith("5", "shift", 0), "ModelSamplingSD3 5: \"shift\" is 0; it must be from 0.1 to 100");
    EXPECT_ERROR(errorWith("16", "fps", 1e300), "SaveAnimatedWEBP 16: \"fps\" is 1e+300; it must be from 1 to 240");
    Json g = oneShot();
    g["9"]["inputs"]["steps"] = 30.0;  // a whole number written as a float is that number
    QCOMPARE(importComfyWorkflow(g.dump(), "wf.json", testing::withFamilies()).sequence.settings.sampler.steps, 30);
  }

  void seedsAreExact64BitValues() {
    QCOMPARE(seedAfterImport("18446744073709551615"), std::uint64_t{18446744073709551615ull});
    QCOMPARE(seedAfterImport("9007199254740993"), std::uint64_t{9007199254740993ull});
    QCOMPARE(seedAfterImport("0"), std::uint64_t{0});
    EXPECT_ERROR(errorWith("9", "seed", -5),
                 "KSampler 9: \"seed\" is -5; a seed is a whole number from 0 to 18446744073709551615");
    std::string over = oneShot().dump();
    over.replace(over.find("\"seed\":1001"), 11, "\"seed\":1180591620717411303424");  // 2^70
    EXPECT_ERROR(importErrorOf(over), "\"seed\" is 1.1805916207174113e+21; a seed is a whole number");
    EXPECT_ERROR(errorWith("9", "seed", "42"), "\"seed\" is \"42\"");

    // export → import keeps the largest seed and 2^53+1 exactly.
    Json g = oneShot();
    g["9"]["inputs"]["seed"] = 18446744073709551615ull;
    Sequence sequence = importComfyWorkflow(g.dump(), "wf.json", testing::withFamilies()).sequence;
    Shot second = sequence.shots[0];
    second.id = "shot-2";
    second.seed = 9007199254740993ull;
    sequence.shots.push_back(second);
    const std::vector<ComfyShotWorkflow> out = exportComfyWorkflows(sequence, resolve::resolveSequence(sequence, {}));
    QCOMPARE(out.size(), std::size_t{2});
    QCOMPARE(importComfyWorkflow(out[0].json, "a.json", testing::withFamilies()).sequence.shots[0].seed,
             std::uint64_t{18446744073709551615ull});
    QCOMPARE(importComfyWorkflow(out[1].json, "b.json", testing::withFamilies()).sequence.shots[0].seed,
             std::uint64_t{9007199254740993ull});
  }

  void modelNamesStayInsideTheModelsFolder() {
    EXPECT_ERROR(
        errorWith("1", "unet_name", "../../etc/passwd"),
        "UNETLoader 1: \"unet_name\" is \"../../etc/passwd\", which is not a file name inside a ComfyUI folder");
    EXPECT_ERROR(errorWith("1", "unet_name", "/etc/passwd"), "not a file name inside a ComfyUI folder");
    EXPECT_ERROR(errorWith("1", "unet_name", "wan/../../x.safetensors"), "not a file name inside");
    EXPECT_ERROR(errorWith("1", "unet_name", "C:\\models\\x.safetensors"), "not a file name inside");
    EXPECT_ERROR(errorWith("3", "vae_name", "..\\vae.safetensors"), "VAELoader 3: \"vae_name\"");
    EXPECT_ERROR(errorWith("2", "clip_name", ""), "CLIPLoader 2: \"clip_name\"");
    Json g = oneShot();
    g["1"]["inputs"]["unet_name"] = "wan\\wan2.1_t2v_1.3B_fp16.safetensors";  // ComfyUI on Windows
    QCOMPARE(importComfyWorkflow(g.dump(), "wf.json", testing::withFamilies()).sequence.settings.model.dit,
             std::string("wan/wan2.1_t2v_1.3B_fp16.safetensors"));
  }

  // 25 000 shots in 100 000 nodes, and one shot behind a chain of 100 000 reroutes: linear work.
  void largeGraphsImportInLinearTime() {
    Json g = oneShot();
    for (int shot = 0; shot < 25000; ++shot) {
      const int id = 100 + 4 * shot;
      g[std::to_string(id)] = api("CLIPTextEncode", {{"text", "shot " + std::to_string(shot)}, {"clip", from(2)}});
      g[std::to_string(id + 1)] = api("EmptyHunyuanLatentVideo", {{"width", 64}, {"height", 64}, {"length", 17}});
      g[std::to_string(id + 2)] = api("KSampler", {{"seed", shot},
                                                   {"steps", 20},
                                                   {"cfg", 4.0},
                                                   {"sampler_name", "uni_pc"},
                                                   {"scheduler", "simple"},
                                                   {"model", from(5)},
                                                   {"positive", from(id)},
                                                   {"negative", from(7)},
                                                   {"latent_image", from(id + 1)}});
      g[std::to_string(id + 3)] = api("VAEDecode", {{"samples", from(id + 2)}, {"vae", from(3)}});
    }
    QElapsedTimer timer;
    timer.start();
    const ComfyImport wide = importComfyWorkflow(g.dump(), "wf.json", testing::withFamilies());
    const qint64 wideMs = timer.restart();
    QCOMPARE(wide.sequence.shots.size(), std::size_t{25001});
    QCOMPARE(wide.sequence.shots.back().prompt, std::string("shot 24999"));

    constexpr int kChain = 100000;
    Json nodes = Json::array(), links = Json::array();
    auto node = [](int id, const char* type, Json inputs, Json widgets) {
      return Json{{"id", id}, {"type", type}, {"inputs", std::move(inputs)}, {"widgets_values", std::move(widgets)}};
    };
    auto in = [](const char* name, int link) { return Json{{"name", name}, {"link", link}}; };
    nodes.push_back(node(1, "UNETLoader", Json::array(), {"dit.safetensors", "default"}));
    nodes.push_back(node(2, "EmptyHunyuanLatentVideo", Json::array(), {64, 64, 17, 1}));
    for (int i = 0; i < kChain; ++i) {  // reroute 10+i reads link i+1 from the node before it
      nodes.push_back(node(10 + i, "Reroute", Json::array({in("", i + 1)}), Json::array()));
      links.push_back(Json::array({i + 1, i == 0 ? 1 : 10 + i - 1, 0, 10 + i, 0, "MODEL"}));
    }
    links.push_back(Json::array({kChain + 1, 10 + kChain - 1, 0, 5, 0, "MODEL"}));
    links.push_back(Json::array({kChain + 2, 2, 0, 5, 3, "LATENT"}));
    nodes.push_back(node(5, "KSampler", Json::array({in("model", kChain + 1), in("latent_image", kChain + 2)}),
                         {3, "fixed", 20, 5, "euler", "simple", 1}));
    timer.restart();
    const ComfyImport chain =
        importComfyWorkflow(Json{{"nodes", nodes}, {"links", links}}.dump(), "chain.json", testing::withFamilies());
    const qint64 chainMs = timer.elapsed();
    QCOMPARE(chain.sequence.shots.size(), std::size_t{1});
    QCOMPARE(chain.sequence.settings.model.dit, std::string("dit.safetensors"));
    qInfo("100 000 nodes, 25 001 shots: %lld ms; 100 000 reroutes: %lld ms", wideMs, chainMs);
    // A rescan per node (the old sort) took minutes here; linear work takes a second or two.
    QVERIFY2(wideMs < 10000 && chainMs < 10000, qPrintable(QString("%1 ms, %2 ms").arg(wideMs).arg(chainMs)));
  }
};

SHOTCHAIN_TEST(TestComfyHostile, Core)
#include "test_comfy_hostile.moc"
