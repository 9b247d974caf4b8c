// ComfyUI's stock Wan 2.2 14B templates (UI format, positional widgets): two UNETLoader → ModelSamplingSD3
// chains and two chained KSamplerAdvanced import as one shot with two experts, the split kept as the step
// index (switch_step); the I2V template's WanImageToVideo gives the start image. export-comfy writes the
// two-sampler graph back and it imports the same.
#include <QTest>

#include <cstdio>
#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

#include "comfy_families.h"
#include "golden_model_facts.h"
#include "interop/comfy_export.h"
#include "interop/comfy_import.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::interop;
using Json = nlohmann::json;

namespace {

Json node(int id, const char* type, Json inputs, Json widgets) {
  return Json{{"id", id},
              {"type", type},
              {"inputs", std::move(inputs)},
              {"outputs", Json::array()},
              {"widgets_values", std::move(widgets)}};
}
Json in(const char* name, int link) { return Json{{"name", name}, {"type", "*"}, {"link", link}}; }

// As "video_wan2_2_14B_t2v" lays it out (its 4-step variant adds a LoraLoaderModelOnly on each chain:
// `withLoras`). `i2v`: "video_wan2_2_14B_i2v", with WanImageToVideo and a LoadImage.
Json a14bTemplate(bool i2v, bool withLoras = false) {
  const std::string kind = i2v ? "i2v" : "t2v";
  Json nodes = Json::array();
  nodes.push_back(
      node(37, "UNETLoader", Json::array(), {"wan2.2_" + kind + "_high_noise_14B_fp8_scaled.safetensors", "default"}));
  nodes.push_back(
      node(56, "UNETLoader", Json::array(), {"wan2.2_" + kind + "_low_noise_14B_fp8_scaled.safetensors", "default"}));
  nodes.push_back(node(38, "CLIPLoader", Json::array(), {"umt5_xxl_fp8_e4m3fn_scaled.safetensors", "wan", "default"}));
  nodes.push_back(node(39, "VAELoader", Json::array(), {"wan_2.1_vae.safetensors"}));
  int highModel = 1, lowModel = 2;
  if (withLoras) {
    nodes.push_back(
        node(80, "LoraLoaderModelOnly", Json::array({in("model", 1)}), {"lightx2v_high_noise.safetensors", 1.0}));
    nodes.push_back(
        node(81, "LoraLoaderModelOnly", Json::array({in("model", 2)}), {"lightx2v_low_noise.safetensors", 1.0}));
    highModel = 30;
    lowModel = 31;
  }
  nodes.push_back(node(54, "ModelSamplingSD3", Json::array({in("model", highModel)}), {8.0}));
  nodes.push_back(node(55, "ModelSamplingSD3", Json::array({in("model", lowModel)}), {8.0}));
  nodes.push_back(
      node(6, "CLIPTextEncode", Json::array({in("clip", 3)}), {"a lighthouse keeper climbs the spiral stairs"}));
  nodes.push_back(node(7, "CLIPTextEncode", Json::array({in("clip", 4)}), {"blurry, static"}));
  // The latent: an empty video latent, or WanImageToVideo whose outputs are positive (0), negative (1), latent (2).
  int positive = 5, negative = 6, positiveLow = 20, negativeLow = 21;
  if (i2v) {
    nodes.push_back(node(62, "LoadImage", Json::array(), {"keeper.png", "image"}));
    nodes.push_back(node(50, "WanImageToVideo",
                         Json::array({in("positive", 5), in("negative", 6), in("vae", 7), in("start_image", 22)}),
                         {1280, 720, 81, 1}));
  } else {
    nodes.push_back(node(61, "EmptyHunyuanLatentVideo", Json::array(), {1280, 720, 81, 1}));
  }
  if (i2v) {
    positive = 23;
    negative = 24;
    positiveLow = 25;
    negativeLow = 26;
  }
  nodes.push_back(
      node(57, "KSamplerAdvanced",
           Json::array({in("model", 8), in("positive", positive), in("negative", negative), in("latent_image", 9)}),
           {"enable", 518936403245791, "randomize", 20, 3.5, "euler", "simple", 0, 10, "enable"}));
  nodes.push_back(node(
      58, "KSamplerAdvanced",
      Json::array({in("model", 10), in("positive", positiveLow), in("negative", negativeLow), in("latent_image", 11)}),
      {"disable", 0, "fixed", 20, 3.0, "euler", "simple", 10, 10000, "disable"}));
  nodes.push_back(node(8, "VAEDecode", Json::array({in("samples", 12), in("vae", 13)}), Json::array()));
  nodes.push_back(node(59, "CreateVideo", Json::array({in("images", 14)}), {16}));
  nodes.push_back(node(60, "SaveVideo", Json::array({in("video", 15)}), {"video/ComfyUI", "auto", "auto"}));
  const int latent = i2v ? 50 : 61;
  Json links = Json::array({{3, 38, 0, 6, 0, "CLIP"},
                            {4, 38, 0, 7, 0, "CLIP"},
                            {8, 54, 0, 57, 0, "MODEL"},
                            {9, latent, i2v ? 2 : 0, 57, 3, "LATENT"},
                            {10, 55, 0, 58, 0, "MODEL"},
                            {11, 57, 0, 58, 3, "LATENT"},
                            {12, 58, 0, 8, 0, "LATENT"},
                            {13, 39, 0, 8, 1, "VAE"},
                            {14, 8, 0, 59, 0, "IMAGE"},
                            {15, 59, 0, 60, 0, "VIDEO"}});
  if (withLoras) {
    links.push_back({1, 37, 0, 80, 0, "MODEL"});
    links.push_back({2, 56, 0, 81, 0, "MODEL"});
    links.push_back({30, 80, 0, 54, 0, "MODEL"});
    links.push_back({31, 81, 0, 55, 0, "MODEL"});
  } else {
    links.push_back({1, 37, 0, 54, 0, "MODEL"});
    links.push_back({2, 56, 0, 55, 0, "MODEL"});
  }
  if (i2v) {
    for (const Json& l : Json::array({{5, 6, 0, 50, 0, "CONDITIONING"},
                                      {6, 7, 0, 50, 1, "CONDITIONING"},
                                      {7, 39, 0, 50, 2, "VAE"},
                                      {22, 62, 0, 50, 3, "IMAGE"},
                                      {23, 50, 0, 57, 1, "CONDITIONING"},
                                      {24, 50, 1, 57, 2, "CONDITIONING"},
                                      {25, 50, 0, 58, 1, "CONDITIONING"},
                                      {26, 50, 1, 58, 2, "CONDITIONING"}}))
      links.push_back(l);
  } else {
    for (const Json& l : Json::array({{5, 6, 0, 57, 1, "CONDITIONING"},
                                      {6, 7, 0, 57, 2, "CONDITIONING"},
                                      {20, 6, 0, 58, 1, "CONDITIONING"},
                                      {21, 7, 0, 58, 2, "CONDITIONING"}}))
      links.push_back(l);
  }
  return {{"last_node_id", 81}, {"last_link_id", 31}, {"nodes", nodes}, {"links", links}, {"version", 0.4}};
}

// "video_wan2_2_14B_flf2v": the I2V pair's graph with WanFirstLastFrameToVideo taking a start and an end image
// (no CLIP vision: Wan 2.2 has no image embedding).
Json flfTemplate() {
  Json workflow = a14bTemplate(true);
  for (Json& n : workflow["nodes"])
    if (n["id"] == 50) {
      n["type"] = "WanFirstLastFrameToVideo";
      n["inputs"].push_back(in("end_image", 27));
    }
  workflow["nodes"].push_back(node(63, "LoadImage", Json::array(), {"lamp.png", "image"}));
  workflow["links"].push_back({27, 63, 0, 50, 4, "IMAGE"});
  return workflow;
}

// The Wan 2.1 templates' CLIP vision branch on the image node: CLIPVisionLoader → CLIPVisionEncode(start picture)
// into `input` (clip_vision_output for WanImageToVideo, clip_vision_start_image for WanFirstLastFrameToVideo).
Json withClipVision(Json workflow, const char* input, const char* crop) {
  for (Json& n : workflow["nodes"])
    if (n["id"] == 50) n["inputs"].push_back(in(input, 42));
  workflow["nodes"].push_back(node(70, "CLIPVisionLoader", Json::array(), {"clip_vision_h.safetensors"}));
  workflow["nodes"].push_back(
      node(71, "CLIPVisionEncode", Json::array({in("clip_vision", 40), in("image", 41)}), Json::array({crop})));
  workflow["links"].push_back({40, 70, 0, 71, 0, "CLIP_VISION"});
  workflow["links"].push_back({41, 62, 0, 71, 1, "IMAGE"});
  workflow["links"].push_back({42, 71, 0, 50, 5, "CLIP_VISION_OUTPUT"});
  return workflow;
}

// A two-clip SVI 2.0 Pro chain as the KJNodes examples lay it out: the I2V pair with an SVI LoRA on each expert, the
// anchor picture resized (ImageResizeKJv2) and encoded once, a WanImageToVideoSVIPro per clip (the second taking
// the first clip's low-noise sampler as prev_samples), each clip decoded and joined by ImageBatchExtendWithOverlap.
// `sized`: false links the anchor straight into the VAEEncode, so nothing in the workflow says the clip's size.
Json sviChain(bool sized = true) {
  Json nodes = Json::array();
  nodes.push_back(
      node(37, "UNETLoader", Json::array(), {"wan2.2_i2v_high_noise_14B_fp8_scaled.safetensors", "default"}));
  nodes.push_back(
      node(56, "UNETLoader", Json::array(), {"wan2.2_i2v_low_noise_14B_fp8_scaled.safetensors", "default"}));
  nodes.push_back(node(38, "CLIPLoader", Json::array(), {"umt5_xxl_fp8_e4m3fn_scaled.safetensors", "wan", "default"}));
  nodes.push_back(node(39, "VAELoader", Json::array(), {"wan_2.1_vae.safetensors"}));
  nodes.push_back(node(80, "LoraLoaderModelOnly", Json::array({in("model", 1)}),
                       {"SVI_v2_PRO_Wan2.2-I2V-A14B_HIGH_lora_rank_128_fp16.safetensors", 1.0}));
  nodes.push_back(node(81, "LoraLoaderModelOnly", Json::array({in("model", 2)}),
                       {"SVI_v2_PRO_Wan2.2-I2V-A14B_LOW_lora_rank_128_fp16.safetensors", 1.0}));
  nodes.push_back(node(54, "ModelSamplingSD3", Json::array({in("model", 30)}), {5.0}));
  nodes.push_back(node(55, "ModelSamplingSD3", Json::array({in("model", 31)}), {5.0}));
  nodes.push_back(node(6, "CLIPTextEncode", Json::array({in("clip", 3)}), {"the keeper walks along the cliff"}));
  nodes.push_back(node(7, "CLIPTextEncode", Json::array({in("clip", 4)}), {"blurry, static"}));
  nodes.push_back(node(62, "LoadImage", Json::array(), {"anchor.png", "image"}));
  nodes.push_back(node(63, "ImageResizeKJv2", Json::array({in("image", 22)}),
                       {832, 480, "lanczos", "crop", "0, 0, 0", "center", 16, "cpu"}));
  nodes.push_back(node(64, "VAEEncode", Json::array({in("pixels", 23), in("vae", 7)}), Json::array()));
  nodes.push_back(node(50, "WanImageToVideoSVIPro",
                       Json::array({in("positive", 5), in("negative", 6), in("anchor_samples", 24)}), {81, 1}));
  nodes.push_back(
      node(51, "WanImageToVideoSVIPro",
           Json::array({in("positive", 32), in("negative", 33), in("anchor_samples", 34), in("prev_samples", 35)}),
           {81, 2}));
  const auto pair = [&](int high, int low, long long seed, int pos, int neg, int latent, int model, int modelLow,
                        int posLow, int negLow, int handed) {
    nodes.push_back(
        node(high, "KSamplerAdvanced",
             Json::array({in("model", model), in("positive", pos), in("negative", neg), in("latent_image", latent)}),
             {"enable", seed, "fixed", 8, 5.0, "euler", "simple", 0, 4, "enable"}));
    nodes.push_back(node(low, "KSamplerAdvanced",
                         Json::array({in("model", modelLow), in("positive", posLow), in("negative", negLow),
                                      in("latent_image", handed)}),
                         {"disable", 0, "fixed", 8, 5.0, "euler", "simple", 4, 10000, "disable"}));
  };
  pair(57, 58, 0, 25, 26, 9, 8, 10, 27, 28, 11);
  pair(67, 68, 42, 36, 37, 38, 48, 49, 39, 40, 41);
  nodes.push_back(node(8, "VAEDecode", Json::array({in("samples", 12), in("vae", 13)}), Json::array()));
  nodes.push_back(node(9, "VAEDecode", Json::array({in("samples", 42), in("vae", 43)}), Json::array()));
  nodes.push_back(node(70, "ImageBatchExtendWithOverlap", Json::array({in("source_images", 44), in("new_images", 45)}),
                       {4, "source", "linear_blend"}));
  nodes.push_back(node(59, "CreateVideo", Json::array({in("images", 46)}), {16}));
  nodes.push_back(node(60, "SaveVideo", Json::array({in("video", 47)}), {"video/ComfyUI", "auto", "auto"}));
  Json links = Json::array({{1, 37, 0, 80, 0, "MODEL"},         {2, 56, 0, 81, 0, "MODEL"},
                            {30, 80, 0, 54, 0, "MODEL"},        {31, 81, 0, 55, 0, "MODEL"},
                            {3, 38, 0, 6, 0, "CLIP"},           {4, 38, 0, 7, 0, "CLIP"},
                            {22, 62, 0, 63, 0, "IMAGE"},        {23, sized ? 63 : 62, 0, 64, 0, "IMAGE"},
                            {7, 39, 0, 64, 1, "VAE"},           {5, 6, 0, 50, 0, "CONDITIONING"},
                            {6, 7, 0, 50, 1, "CONDITIONING"},   {24, 64, 0, 50, 2, "LATENT"},
                            {8, 54, 0, 57, 0, "MODEL"},         {25, 50, 0, 57, 1, "CONDITIONING"},
                            {26, 50, 1, 57, 2, "CONDITIONING"}, {9, 50, 2, 57, 3, "LATENT"},
                            {10, 55, 0, 58, 0, "MODEL"},        {27, 50, 0, 58, 1, "CONDITIONING"},
                            {28, 50, 1, 58, 2, "CONDITIONING"}, {11, 57, 0, 58, 3, "LATENT"},
                            {12, 58, 0, 8, 0, "LATENT"},        {13, 39, 0, 8, 1, "VAE"},
                            {32, 6, 0, 51, 0, "CONDITIONING"},  {33, 7, 0, 51, 1, "CONDITIONING"},
                            {34, 64, 0, 51, 2, "LATENT"},       {35, 58, 0, 51, 3, "LATENT"},
                            {48, 54, 0, 67, 0, "MODEL"},        {36, 51, 0, 67, 1, "CONDITIONING"},
                            {37, 51, 1, 67, 2, "CONDITIONING"}, {38, 51, 2, 67, 3, "LATENT"},
                            {49, 55, 0, 68, 0, "MODEL"},        {39, 51, 0, 68, 1, "CONDITIONING"},
                            {40, 51, 1, 68, 2, "CONDITIONING"}, {41, 67, 0, 68, 3, "LATENT"},
                            {42, 68, 0, 9, 0, "LATENT"},        {43, 39, 0, 9, 1, "VAE"},
                            {44, 8, 0, 70, 0, "IMAGE"},         {45, 9, 0, 70, 1, "IMAGE"},
                            {46, 70, 2, 59, 0, "IMAGE"},        {47, 59, 0, 60, 0, "VIDEO"}});
  return {{"last_node_id", 81}, {"last_link_id", 49}, {"nodes", nodes}, {"links", links}, {"version", 0.4}};
}

std::map<std::string, std::vector<Json>> byType(const std::string& json) {
  std::map<std::string, std::vector<Json>> out;
  const Json graph = Json::parse(json);
  for (const auto& [id, n] : graph.items()) out[n["class_type"].get<std::string>()].push_back(n);
  return out;
}

}  // namespace

class TestComfyA14b : public QObject {
  Q_OBJECT

  static void checkShot(const ComfyImport& imported, bool i2v) {
    QCOMPARE(imported.sequence.shots.size(), std::size_t{1});
    const Shot& shot = imported.sequence.shots.front();
    const SequenceSettings& s = imported.sequence.settings;
    const std::string kind = i2v ? "i2v" : "t2v";
    QCOMPARE(s.model.ditHighNoise, "wan2.2_" + kind + "_high_noise_14B_fp8_scaled.safetensors");
    QCOMPARE(s.model.dit, "wan2.2_" + kind + "_low_noise_14B_fp8_scaled.safetensors");
    QCOMPARE(s.model.vae, std::string("wan_2.1_vae.safetensors"));
    QCOMPARE(shot.switchStep, std::optional<int>(10));
    QCOMPARE(s.sampler.steps, 20);
    QCOMPARE(s.sampler.guidance, 3.0);                                  // the low-noise sampler's cfg
    QCOMPARE(s.sampler.guidanceHighNoise, std::optional<double>(3.5));  // the high-noise sampler's
    QCOMPARE(s.sampler.shift, 8.0);
    QCOMPARE(shot.seed, std::uint64_t{518936403245791});
    QCOMPARE(shot.width, 1280);
    QCOMPARE(shot.height, 720);
    QCOMPARE(shot.frames, 81);
    QCOMPARE(s.fps, 16.0);
    QCOMPARE(shot.prompt, std::string("a lighthouse keeper climbs the spiral stairs"));
    QCOMPARE(shot.negativePrompt, std::string("blurry, static"));
    QCOMPARE(shot.startImage, i2v ? std::string("keeper.png") : std::string());
    for (const UnmappedNode& n : imported.unmapped)
      QVERIFY2(n.type == "SaveVideo" || n.type == "CreateVideo", n.type.c_str());
  }

 private Q_SLOTS:
  void t2vTemplateImportsAsOneShotWithTwoExperts() {
    checkShot(importComfyWorkflow(a14bTemplate(false).dump(), "video_wan2_2_14B_t2v.json", testing::withFamilies()),
              false);
  }

  void i2vTemplateImportsWithItsStartImage() {
    checkShot(importComfyWorkflow(a14bTemplate(true).dump(), "video_wan2_2_14B_i2v.json", testing::withFamilies()),
              true);
  }

  // The 4-step variant: one LoRA per expert, each patching its own expert; the pair round-trips.
  void loraPerExpert() {
    const ComfyImport imported =
        importComfyWorkflow(a14bTemplate(false, true).dump(), "4step.json", testing::withFamilies());
    checkShot(imported, false);
    const Shot& shot = imported.sequence.shots.front();
    QVERIFY(shot.loras && shot.loras->size() == 2);
    QCOMPARE(shot.loras->at(0).file, std::string("lightx2v_high_noise.safetensors"));
    QCOMPARE(shot.loras->at(0).expert, std::string("high"));
    QCOMPARE(shot.loras->at(1).file, std::string("lightx2v_low_noise.safetensors"));
    QCOMPARE(shot.loras->at(1).expert, std::string("low"));
    const auto facts = testing::goldenModelFacts("wan22_moe_low_tiny.safetensors", "wan_vae_tiny.safetensors",
                                                 "wan22_moe_high_tiny.safetensors");
    const std::vector<ComfyShotWorkflow> out =
        exportComfyWorkflows(imported.sequence, testing::resolvedAgainst(imported.sequence, facts));
    QCOMPARE(byType(out[0].json)["LoraLoaderModelOnly"].size(), std::size_t{2});
    const ComfyImport again = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
    QCOMPARE(again.sequence.shots.front().loras, shot.loras);
  }

  void exportWritesTheTwoSamplerGraphBack() {
    for (const bool i2v : {false, true}) {
      const ComfyImport imported = importComfyWorkflow(a14bTemplate(i2v).dump(), "t.json", testing::withFamilies());
      const auto facts = i2v ? testing::goldenModelFacts("wan22_i2v_low_tiny.safetensors", "wan_vae_tiny.safetensors",
                                                         "wan22_i2v_high_tiny.safetensors")
                             : testing::goldenModelFacts("wan22_moe_low_tiny.safetensors", "wan_vae_tiny.safetensors",
                                                         "wan22_moe_high_tiny.safetensors");
      const std::vector<ComfyShotWorkflow> out =
          exportComfyWorkflows(imported.sequence, testing::resolvedAgainst(imported.sequence, facts));
      QCOMPARE(out.size(), std::size_t{1});
      auto types = byType(out[0].json);
      QCOMPARE(types["UNETLoader"].size(), std::size_t{2});
      QCOMPARE(types["ModelSamplingSD3"].size(), std::size_t{2});
      QCOMPARE(types["KSamplerAdvanced"].size(), std::size_t{2});
      QCOMPARE(types.count("KSampler"), std::size_t{0});
      QCOMPARE(types.count("WanImageToVideo"), std::size_t{i2v ? 1u : 0u});
      QVERIFY(types.count("CreateVideo") && types.count("SaveVideo"));
      if (std::getenv("SHOTCHAIN_DUMP")) std::fprintf(stderr, "%s\n", out[0].json.c_str());
      const ComfyImport again = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
      QCOMPARE(again.sequence.settings.model.ditHighNoise, imported.sequence.settings.model.ditHighNoise);
      QCOMPARE(again.sequence.settings.model.dit, imported.sequence.settings.model.dit);
      QCOMPARE(again.sequence.settings.sampler.guidanceHighNoise, imported.sequence.settings.sampler.guidanceHighNoise);
      QCOMPARE(again.sequence.settings.sampler.guidance, imported.sequence.settings.sampler.guidance);
      QCOMPARE(QString::fromStdString(serializeShot(again.sequence.shots.front())),
               QString::fromStdString(serializeShot(imported.sequence.shots.front())));
    }
  }

  void firstLastFrameTemplateImportsBothPicturesAndRoundTrips() {
    const ComfyImport imported =
        importComfyWorkflow(flfTemplate().dump(), "video_wan2_2_14B_flf2v.json", testing::withFamilies());
    checkShot(imported, true);
    const Shot& shot = imported.sequence.shots.front();
    QCOMPARE(shot.endImage, std::string("lamp.png"));
    const auto facts = testing::goldenModelFacts("wan22_i2v_low_tiny.safetensors", "wan_vae_tiny.safetensors",
                                                 "wan22_i2v_high_tiny.safetensors");
    const std::vector<ComfyShotWorkflow> out =
        exportComfyWorkflows(imported.sequence, testing::resolvedAgainst(imported.sequence, facts));
    auto types = byType(out[0].json);
    QCOMPARE(types["WanFirstLastFrameToVideo"].size(), std::size_t{1});
    QCOMPARE(types.count("WanImageToVideo"), std::size_t{0});
    QCOMPARE(types["LoadImage"].size(), std::size_t{2});
    const ComfyImport again = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
    QCOMPARE(QString::fromStdString(serializeShot(again.sequence.shots.front())),
             QString::fromStdString(serializeShot(shot)));
  }

  // The CLIP vision branch names the model set's image encoder; ComfyUI's centre crop is said to differ.
  void clipVisionBranchNamesTheImageEncoder() {
    const ComfyImport i2v = importComfyWorkflow(withClipVision(a14bTemplate(true), "clip_vision_output", "none").dump(),
                                                "wan21_i2v.json", testing::withFamilies());
    QCOMPARE(i2v.sequence.settings.model.imageEncoder, std::string("clip_vision_h.safetensors"));
    for (const UnmappedNode& n : i2v.unmapped)
      QVERIFY2(n.type == "SaveVideo" || n.type == "CreateVideo", n.type.c_str());
    const ComfyImport flf =
        importComfyWorkflow(withClipVision(flfTemplate(), "clip_vision_start_image", "center").dump(),
                            "wan21_flf2v.json", testing::withFamilies());
    QCOMPARE(flf.sequence.settings.model.imageEncoder, std::string("clip_vision_h.safetensors"));
    QCOMPARE(flf.sequence.shots.front().endImage, std::string("lamp.png"));
    QVERIFY(std::any_of(flf.notes.begin(), flf.notes.end(),
                        [](const std::string& n) { return n.find("crops the centre") != std::string::npos; }));
  }

  // A Wan 2.1 I2V / FLF2V shot exports with its image node and CLIP vision branch, and imports back the same.
  void wan21ImageShotsExportTheirClipBranch() {
    for (const bool firstLast : {false, true}) {
      Sequence s;
      s.settings.model.builtin.clear();
      s.settings.model.dit =
          firstLast ? "wan2.1_flf2v_720p_14B_fp16.safetensors" : "wan2.1_i2v_480p_14B_fp16.safetensors";
      s.settings.model.imageEncoder = "clip_vision_h.safetensors";
      Shot shot;
      shot.id = "a";
      shot.prompt = "a lighthouse keeper climbs the spiral stairs";
      shot.frames = 9;
      shot.width = shot.height = 64;
      shot.startImage = "keeper.png";
      if (firstLast) shot.endImage = "lamp.png";
      s.shots = {shot};
      models::ModelSetFacts facts = testing::goldenModelFacts(
          firstLast ? "wan21_flf2v_tiny.safetensors" : "wan21_i2v_tiny.safetensors", "wan_vae_tiny.safetensors");
      facts.imageEncoder = "CLIP vision H (ViT-H/14)";
      const std::vector<ComfyShotWorkflow> out = exportComfyWorkflows(s, testing::resolvedAgainst(s, facts));
      auto types = byType(out[0].json);
      QCOMPARE(types[firstLast ? "WanFirstLastFrameToVideo" : "WanImageToVideo"].size(), std::size_t{1});
      QCOMPARE(types["CLIPVisionLoader"].size(), std::size_t{1});
      QCOMPARE(types["CLIPVisionEncode"].size(), std::size_t{firstLast ? 2u : 1u});  // FLF2V takes both pictures
      QCOMPARE(types["KSampler"].size(), std::size_t{1});
      const ComfyImport back = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
      QCOMPARE(back.sequence.settings.model.imageEncoder, std::string("clip_vision_h.safetensors"));
      QCOMPARE(back.sequence.shots.front().startImage, std::string("keeper.png"));
      QCOMPARE(back.sequence.shots.front().endImage, firstLast ? std::string("lamp.png") : std::string());
    }
  }

  // KJNodes' SVI Pro chain: one shot a clip, continuity svi, the anchor and the clips' size from the resized
  // picture, the second clip's motion latents; each shot exports with WanImageToVideoSVIPro (the continued one
  // loading what the first saves) and imports back the same.
  void sviProChainImportsAsSviShotsAndRoundTrips() {
    const ComfyImport imported =
        importComfyWorkflow(sviChain().dump(), "wan22_SVI_Pro_native_example_KJ.json", testing::withFamilies());
    QCOMPARE(imported.sequence.shots.size(), std::size_t{2});
    for (const UnmappedNode& n : imported.unmapped)
      QVERIFY2(n.type == "SaveVideo" || n.type == "CreateVideo", n.type.c_str());
    const Shot& first = imported.sequence.shots[0];
    const Shot& second = imported.sequence.shots[1];
    QCOMPARE(first.continuity.mode, ContinuityMode::Svi);
    QCOMPARE(first.continuity.anchorImage, std::string("anchor.png"));
    QCOMPARE(first.continuity.motionLatents, std::optional<int>());
    QCOMPARE(second.continuity.mode, ContinuityMode::Svi);
    QCOMPARE(second.continuity.anchorImage, std::string());  // the chain's anchor, not repeated
    QCOMPARE(second.continuity.motionLatents, std::optional<int>(2));
    QCOMPARE(second.seed, std::uint64_t{42});
    for (const Shot* shot : {&first, &second}) {
      QCOMPARE(shot->width, 832);
      QCOMPARE(shot->height, 480);
      QCOMPARE(shot->frames, 81);
      QCOMPARE(shot->switchStep, std::optional<int>(4));
      QVERIFY(shot->loras && shot->loras->size() == 2);
      QCOMPARE(shot->loras->at(0).expert, std::string("high"));
      QCOMPARE(shot->loras->at(1).expert, std::string("low"));
    }
    QVERIFY(std::any_of(imported.notes.begin(), imported.notes.end(),
                        [](const std::string& n) { return n.find("\"linear_blend\"") != std::string::npos; }));

    const auto facts = testing::goldenModelFacts("wan22_i2v_low_tiny.safetensors", "wan_vae_tiny.safetensors",
                                                 "wan22_i2v_high_tiny.safetensors");
    const resolve::ResolvedSequence resolved = testing::resolvedAgainst(imported.sequence, facts);
    QCOMPARE(resolved.shots[0].imageCondition, std::string("svi"));
    QCOMPARE(resolved.shots[1].predecessor, 0);
    QCOMPARE(resolved.shots[1].motionLatents, 2);
    QCOMPARE(resolved.shots[1].anchorImage.filename().string(), std::string("anchor.png"));
    const std::vector<ComfyShotWorkflow> out = exportComfyWorkflows(imported.sequence, resolved);
    QCOMPARE(out.size(), std::size_t{2});
    for (std::size_t i = 0; i < 2; ++i) {
      auto types = byType(out[i].json);
      QCOMPARE(types["WanImageToVideoSVIPro"].size(), std::size_t{1});
      QCOMPARE(types["SaveLatent"].size(), std::size_t{1});
      QCOMPARE(types.count("LoadLatent"), std::size_t{i});
      QCOMPARE(types.count("WanImageToVideo"), std::size_t{0});
      const ComfyImport back = importComfyWorkflow(out[i].json, "back.json", testing::withFamilies());
      QCOMPARE(back.sequence.shots.size(), std::size_t{1});
      Shot expected = imported.sequence.shots[i];
      expected.id = "shot-1";
      expected.continuity.anchorImage = "anchor.png";  // a workflow of one clip names its anchor
      QCOMPARE(QString::fromStdString(serializeShot(back.sequence.shots.front())),
               QString::fromStdString(serializeShot(expected)));
    }
  }

  void anSviChainWithoutTheClipSizeIsRefused() {
    try {
      importComfyWorkflow(sviChain(false).dump(), "svi.json", testing::withFamilies());
      QFAIL("imported");
    } catch (const std::runtime_error& error) {
      QVERIFY2(std::string(error.what()).find("scale it with an ImageScale") != std::string::npos, error.what());
    }
  }

  // A switch step at the last step (every step on the high-noise expert) exports and imports back; one past the
  // shot's steps is refused before anything is written.
  void switchStepsAtTheEndsRoundTrip() {
    ComfyImport imported = importComfyWorkflow(a14bTemplate(false).dump(), "t.json", testing::withFamilies());
    const auto facts = testing::goldenModelFacts("wan22_moe_low_tiny.safetensors", "wan_vae_tiny.safetensors",
                                                 "wan22_moe_high_tiny.safetensors");
    for (const int step : {0, 20}) {
      imported.sequence.shots[0].switchStep = step;
      const std::vector<ComfyShotWorkflow> out =
          exportComfyWorkflows(imported.sequence, testing::resolvedAgainst(imported.sequence, facts));
      const ComfyImport back = importComfyWorkflow(out[0].json, "back.json", testing::withFamilies());
      QCOMPARE(back.sequence.shots.size(), std::size_t{1});
      QCOMPARE(back.sequence.shots[0].switchStep, std::optional<int>(step));
    }
    imported.sequence.shots[0].switchStep = 21;
    const resolve::ResolvedSequence past = testing::resolvedAgainst(imported.sequence, facts);
    QVERIFY(!past.ok());
    QCOMPARE(past.problems.front().path, std::string("shots[0].switch_step"));
    QVERIFY2(past.problems.front().message.find("past the shot's 20 steps") != std::string::npos,
             past.problems.front().message.c_str());
  }

  void aSecondHalfOfAnotherLengthIsRefused() {
    Json workflow = a14bTemplate(false);
    for (Json& n : workflow["nodes"])
      if (n["id"] == 58) n["widgets_values"][3] = 30;
    try {
      importComfyWorkflow(workflow.dump(), "bad.json", testing::withFamilies());
      QFAIL("imported");
    } catch (const std::runtime_error& error) {
      QVERIFY2(std::string(error.what()).find("split one schedule") != std::string::npos, error.what());
    }
  }
};

SHOTCHAIN_TEST(TestComfyA14b, Appless)
#include "test_comfy_a14b.moc"
