#include "models/wan/wan_knowledge.h"

namespace shotchain::models {
namespace {

// The reference's negative prompt (wan21.md §4.3), what Wan's samplers encode when a shot gives none.
constexpr const char* kNegativePrompt =
    "色调艳丽，过曝，静态，细节模糊不清，字幕，风格，作品，画作，画面，静止，整体发灰，最差质量，低质量，JPEG压缩残留，"
    "丑陋的，残缺的，多余的手指，画得不好的手部，画得不好的脸部，畸形的，毁容的，形态畸形的肢体，手指融合，"
    "静止不动的画面，杂乱的背景，三条腿，背景人很多，倒着走";

constexpr SizePreset kT2vSizes[] = {
    {"832×480 — Wan 480p landscape", 832, 480},
    {"480×832 — Wan 480p portrait", 480, 832},
    {"1280×720 — Wan 720p landscape", 1280, 720},
    {"720×1280 — Wan 720p portrait", 720, 1280},
    {"624×624 — square", 624, 624},
    {"64×64 — demo model", 64, 64},
};

// Wan's layer names as diffusers' WanTransformer3DModel spells them ("blocks.3.self_attn.q" →
// "blocks.3.attn1.to_q").
constexpr LoraLayerAlias kLoraAliases[] = {
    {".self_attn.q", ".attn1.to_q"},  {".self_attn.k", ".attn1.to_k"},
    {".self_attn.v", ".attn1.to_v"},  {".self_attn.o", ".attn1.to_out.0"},
    {".cross_attn.q", ".attn2.to_q"}, {".cross_attn.k", ".attn2.to_k"},
    {".cross_attn.v", ".attn2.to_v"}, {".cross_attn.o", ".attn2.to_out.0"},
    {".ffn.0", ".ffn.net.0.proj"},    {".ffn.2", ".ffn.net.2"},
};

// TeaCache4Wan2.1/teacache_generate.py (use_ret_steps), MagCache4Wan2.1/magcache_generate.py: the T2V tables
// (the two leading 1.0 of MagCache's are the padding of step 0).
constexpr double kTea1_3B[] = {-5.21862437e+04, 9.23041404e+03, -5.28275948e+02, 1.36987616e+01, -4.99875664e-02};
constexpr double kTea14B[] = {-3.03318725e+05, 4.90537029e+04, -2.65530556e+03, 5.87365115e+01, -3.15583525e-01};
constexpr double kMagRatios14B[]{
    1.0,     1.0,     1.02504, 1.03017, 1.00025, 1.00251, 0.9985,  0.99962, 0.99779, 0.99771, 0.9966,  0.99658, 0.99482,
    0.99476, 0.99467, 0.99451, 0.99664, 0.99656, 0.99434, 0.99431, 0.99533, 0.99545, 0.99468, 0.99465, 0.99438, 0.99434,
    0.99516, 0.99517, 0.99384, 0.9938,  0.99404, 0.99401, 0.99517, 0.99516, 0.99409, 0.99408, 0.99428, 0.99426, 0.99347,
    0.99343, 0.99418, 0.99416, 0.99271, 0.99269, 0.99313, 0.99311, 0.99215, 0.99215, 0.99218, 0.99215, 0.99216, 0.99217,
    0.99163, 0.99161, 0.99138, 0.99135, 0.98982, 0.9898,  0.98996, 0.98995, 0.9887,  0.98866, 0.98772, 0.9877,  0.98767,
    0.98765, 0.98573, 0.9857,  0.98501, 0.98498, 0.9838,  0.98376, 0.98177, 0.98173, 0.98037, 0.98035, 0.97678, 0.97677,
    0.97546, 0.97543, 0.97184, 0.97183, 0.96711, 0.96708, 0.96349, 0.96345, 0.95629, 0.95625, 0.94926, 0.94929, 0.93964,
    0.93961, 0.92511, 0.92504, 0.90693, 0.90678, 0.8796,  0.87945, 0.86111, 0.86189};
constexpr double kMagRatios1_3B[]{
    1.0,     1.0,     1.0124,  1.02213, 1.00166, 1.0041,  0.99791, 1.00061, 0.99682, 0.99762, 0.99634, 0.99685, 0.99567,
    0.99586, 0.99416, 0.99422, 0.99578, 0.99575, 0.9957,  0.99563, 0.99511, 0.99506, 0.99535, 0.99531, 0.99552, 0.99549,
    0.99541, 0.99539, 0.9954,  0.99536, 0.99489, 0.99485, 0.99518, 0.99514, 0.99484, 0.99478, 0.99481, 0.99479, 0.99415,
    0.99413, 0.99419, 0.99416, 0.99396, 0.99393, 0.99388, 0.99386, 0.99349, 0.99349, 0.99309, 0.99304, 0.9927,  0.9927,
    0.99228, 0.99226, 0.99171, 0.9917,  0.99137, 0.99135, 0.99068, 0.99063, 0.99005, 0.99003, 0.98944, 0.98942, 0.98849,
    0.98849, 0.98758, 0.98757, 0.98644, 0.98643, 0.98504, 0.98503, 0.9836,  0.98359, 0.98202, 0.98201, 0.97977, 0.97978,
    0.97717, 0.97718, 0.9741,  0.97411, 0.97003, 0.97002, 0.96538, 0.96541, 0.9593,  0.95933, 0.95086, 0.95089, 0.94013,
    0.94019, 0.92402, 0.92414, 0.90241, 0.9026,  0.86821, 0.86868, 0.81838, 0.81939};

constexpr PublishedCacheTable kCacheTables[] = {
    {kWan21T2v1_3B, kTea1_3B, kMagRatios1_3B},
    {kWan21T2v14B, kTea14B, kMagRatios14B},
};

// ComfyUI's comfy/latent_formats.py, class Wan21 (latent_rgb_factors, latent_rgb_factors_bias).
constexpr std::array<float, 3> kPreviewWeights[] = {
    {-0.1299f, -0.1692f, 0.2932f},  {0.0671f, 0.0406f, 0.0442f},  {0.3568f, 0.2548f, 0.1747f},
    {0.0372f, 0.2344f, 0.1420f},    {0.0313f, 0.0189f, -0.0328f}, {0.0296f, -0.0956f, -0.0665f},
    {-0.3477f, -0.4059f, -0.2925f}, {0.0166f, 0.1902f, 0.1975f},  {-0.0412f, 0.0267f, -0.1364f},
    {-0.1293f, 0.0740f, 0.1636f},   {0.0680f, 0.3019f, 0.1128f},  {0.0032f, 0.0581f, 0.0639f},
    {-0.1251f, 0.0927f, 0.1699f},   {0.0060f, -0.0633f, 0.0005f}, {0.3477f, 0.2275f, 0.2950f},
    {0.1984f, 0.0913f, 0.1861f}};
const LatentRgbTable kPreview{kPreviewWeights, {-0.1835f, -0.0868f, -0.3360f}, "ComfyUI comfy/latent_formats.py Wan21"};

// SVI's LoRAs (docs/keyframes.md): Kijai's SVI_v2_PRO_Wan2.2-I2V-A14B_{HIGH,LOW}_lora_rank_128_fp16 pair of
// SVI 2.0 Pro, and the Wan 2.1 ones of SVI 1.0 / 2.0, whose condition (pixel motion frames) is another.
constexpr NamedLora kNamedLoras[] = {
    {{"svi", "pro", "high"}, "SVI 2.0 Pro for continuity svi (high-noise expert)"},
    {{"svi", "pro", "low"}, "SVI 2.0 Pro for continuity svi (low-noise expert)"},
    {{"svi", "pro", ""}, "SVI 2.0 Pro for continuity svi"},
    {{"svi", "", ""}, "SVI for Wan 2.1 (pixel motion frames; continuity svi is SVI 2.0 Pro's condition)"},
};

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

constexpr SizePreset kI2v480Sizes[] = {
    {"832×480 — Wan 480p landscape", 832, 480},
    {"480×832 — Wan 480p portrait", 480, 832},
    {"624×624 — square", 624, 624},
};
constexpr SizePreset kI2v720Sizes[] = {
    {"1280×720 — Wan 720p landscape", 1280, 720},
    {"720×1280 — Wan 720p portrait", 720, 1280},
    {"960×960 — square", 960, 960},
};

// generate.py: sample_shift 5.0, except i2v at 832×480 (3.0) and flf2v / vace (16); 40 steps for i2v, guide 5.0.
FamilyKnowledge wan21I2vRow(const char* name, std::span<const SizePreset> sizes, double shift, const char* comfyFile) {
  return FamilyKnowledge{.name = name,
                         .defaultNegativePrompt = kNegativePrompt,
                         .sizes = sizes,
                         .loraLayerAliases = kLoraAliases,
                         .loraTarget = "Wan DiT",
                         .namedLoras = kNamedLoras,
                         .sampling = {.shift = shift, .steps = 40, .guidance = 5.0},
                         .comfy = {.file = comfyFile,
                                   .latentNode = "EmptyHunyuanLatentVideo",
                                   .imageToVideoNode = "WanImageToVideo",
                                   .firstLastFrameNode = "WanFirstLastFrameToVideo",
                                   .videoOutput = true}};
}

}  // namespace

const char* wanNegativePrompt() { return kNegativePrompt; }
std::span<const LoraLayerAlias> wanLoraLayerAliases() { return kLoraAliases; }
std::span<const NamedLora> wanNamedLoras() { return kNamedLoras; }

const FamilyKnowledge& wanT2vKnowledge() {
  static const FamilyKnowledge knowledge{
      .name = "Wan 2.1 T2V (SkyReels-V2 DF, causal Wan and the Wan 2.2 T2V-A14B experts too)",
      .defaultNegativePrompt = kNegativePrompt,
      .expertBoundary = 0.875,  // wan/configs/wan_t2v_A14B.py: the A14B experts have T2V-14B's shapes
      .sizes = kT2vSizes,
      .loraLayerAliases = kLoraAliases,
      .loraTarget = "Wan DiT",
      .namedLoras = kNamedLoras,
      .cacheTables = kCacheTables,
      .comfy = {.file = "wan2.1_t2v_1.3B_fp16.safetensors", .latentNode = "EmptyHunyuanLatentVideo"}};
  return knowledge;
}

const FamilyKnowledge& wanVaeKnowledge() {
  static const FamilyKnowledge knowledge{
      .name = "Wan 2.1 VAE", .preview = &kPreview, .comfy = {.file = "wan_2.1_vae.safetensors"}};
  return knowledge;
}

const FamilyKnowledge& wan21I2vKnowledge(const std::string& name) {
  static const FamilyKnowledge i2v480 =
      wan21I2vRow("Wan 2.1 I2V 480p", kI2v480Sizes, 3.0, "wan2.1_i2v_480p_14B_fp16.safetensors");
  static const FamilyKnowledge i2v720 =
      wan21I2vRow("Wan 2.1 I2V 720p", kI2v720Sizes, 5.0, "wan2.1_i2v_720p_14B_fp16.safetensors");
  static const FamilyKnowledge flf2v =
      wan21I2vRow("Wan 2.1 FLF2V", kI2v720Sizes, 16.0, "wan2.1_flf2v_720p_14B_fp16.safetensors");
  static const FamilyKnowledge i2v = wan21I2vRow("Wan 2.1 I2V (480p or 720p)", kT2vSizes, 5.0, "");
  if (name == i2v480.name) return i2v480;
  if (name == i2v720.name) return i2v720;
  if (name == flf2v.name) return flf2v;
  return i2v;
}

std::string wan21I2vName(const std::string& n, const WanConfig& config) {
  if (config.modelType == "flf2v" || has(n, "flf2v")) return "Wan 2.1 FLF2V";
  if (has(n, "480p")) return "Wan 2.1 I2V 480p";
  if (has(n, "720p")) return "Wan 2.1 I2V 720p";
  return has(n, "14b") || config.variant() == "14B" ? "Wan 2.1 I2V-14B" : "Wan 2.1 I2V";
}

std::string wanVariantId(const WanConfig& config) {
  if (config.family() != "Wan 2.1 T2V") return "";
  const std::string size = config.variant();
  return size == "1.3B" ? kWan21T2v1_3B : size == "14B" ? kWan21T2v14B : "";
}

bool wan22FileName(const std::string& n) { return has(n, "wan2.2") || has(n, "wan2_2") || has(n, "wan22"); }
bool wan21FileName(const std::string& n) { return has(n, "wan2.1") || has(n, "wan2_1") || has(n, "wan21"); }

std::string wanFamilyFromFileName(const std::string& n) {
  const bool wan21 = wan21FileName(n);
  if (has(n, "skyreels")) return has(n, "df") ? "SkyReels-V2 diffusion forcing" : "SkyReels-V2";
  if (has(n, "self_forcing") || has(n, "causvid") || has(n, "longlive"))
    return "a causal streaming Wan 2.1 T2V (Self-Forcing family)";
  if (wan22FileName(n) && has(n, "t2v"))
    return std::string("Wan 2.2 T2V-A14B") + (has(n, "high")  ? " high-noise expert"
                                              : has(n, "low") ? " low-noise expert"
                                                              : "");
  if (wan21 && (has(n, "i2v") || has(n, "flf2v")))
    return wan21I2vName(n, WanConfig()) + " (not supported yet: the renderer does not compute its CLIP image features)";
  if (wan21 && has(n, "vace")) return "Wan 2.1 VACE (not supported)";
  if (wan21 && (has(n, "1.3b") || has(n, "1_3b"))) return "Wan 2.1 T2V-1.3B";
  if (wan21 && has(n, "14b")) return "Wan 2.1 T2V-14B";
  return wan21 ? "Wan 2.1" : wan22FileName(n) ? "Wan 2.2" : "";
}

}  // namespace shotchain::models
