#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// A matmul weight every Wan DiT has: its stored dtype decides the load dtype.
inline constexpr const char* kWanMatmulProbe = "blocks.0.ffn.0.weight";

// Constructor arguments of the official WanModel (wan21.md §1.1).
struct WanConfig {
  // "t2v"; "ti2v" (Wan 2.2 TI2V: clean first frames); "i2v" (Wan 2.2 I2V, or Wan 2.1 I2V when imageDim > 0:
  // in_dim − out_dim extra input channels carry the frame mask and the start image's latent); "flf2v" (Wan 2.1
  // first–last frame: i2v's inputs with the CLIP features of both frames).
  std::string modelType = "t2v";
  std::array<std::int64_t, 3> patch{1, 2, 2};
  std::int64_t textLen = 512;
  std::int64_t inDim = 16;
  std::int64_t dim = 1536;
  std::int64_t ffnDim = 8960;
  std::int64_t freqDim = 256;
  std::int64_t textDim = 4096;
  std::int64_t outDim = 16;
  std::int64_t numHeads = 12;
  std::int64_t numLayers = 30;
  double eps = 1e-6;
  bool qkNorm = true;
  bool crossAttnNorm = true;
  // SkyReels-V2 DF: an fps embedding added to the block modulation ("inject_sample_info"; detected
  // from the fps_embedding tensors).
  bool injectSampleInfo = false;
  // Block-causal self-attention over blocks of this many (patched) latent frames; 0 = full attention.
  std::int64_t causalBlockSize = 0;
  // Trained with one timestep per latent frame (diffusion forcing). Implied by the two above.
  bool diffusionForcing = false;
  // Trained to continue a handed latent with the latents of a fresh clip that starts on the previous
  // shot's last frame (the demo model, whose VAE is coherent over one clip only): a shot after a
  // `latent` cut decodes its new latents after a one-frame encode of that frame.
  bool freshClipContinuation = false;
  // Wan 2.1 I2V / FLF2V: the width of the CLIP image features img_emb projects into the context (1280; the
  // official code hard-codes it, so it comes from the tensor shapes), 0 without an image embedding.
  std::int64_t imageDim = 0;
  // FLF2V: rows of img_emb.emb_pos, the position embedding of the first and last frames' tokens (514).
  std::int64_t imagePositionTokens = 0;

  std::int64_t headDim() const { return dim / numHeads; }
  bool hasImageEmbedding() const { return imageDim > 0; }
  // Input channels after the out_dim it denoises (i2v, flf2v): the frame mask and the image latent.
  std::int64_t imageConditionChannels() const {
    return modelType == "i2v" || modelType == "flf2v" ? inDim - outDim : 0;
  }
  // Image tokens a forward expects ahead of the text: 514 (FLF2V: first and last frame), 257 (I2V: one
  // ViT-H/14 image), 0 without an image embedding.
  std::int64_t imageTokens() const { return imagePositionTokens > 0 ? imagePositionTokens : imageDim > 0 ? 257 : 0; }
  std::int64_t patchVolume() const { return patch[0] * patch[1] * patch[2]; }
  std::uint64_t parameterCount() const;
  // "1.3B", "14B", "5B", "A14B" (a Wan 2.2 I2V expert), "tiny" (the golden test size) or "custom".
  std::string variant() const;
  // "Wan 2.1 T2V", "Wan 2.1 I2V", "Wan 2.1 FLF2V", "SkyReels-V2 DF", "Wan 2.1 T2V (diffusion forcing)", with
  // ", causal, chunk N" when causal.
  std::string family() const;
  // The model was trained to denoise each latent frame at its own timestep, so a clean prefix at
  // timestep 0 is something it has seen (diffusion forcing). Wan 2.1 T2V was not.
  bool takesPerFrameTimesteps() const { return diffusionForcing || injectSampleInfo || causalBlockSize > 0; }
  // Throws std::invalid_argument describing the first inconsistency.
  void check() const;

  // The official config.json / golden "config" field names.
  std::string toJson() const;
  static WanConfig fromJson(std::string_view json);  // throws std::invalid_argument
  // "tiny", "tiny-ti2v", "tiny-i2v", "1.3b", "14b", "i2v-a14b", "ti2v-5b", "i2v-14b", "flf2v-14b"; throws
  // std::invalid_argument for other names.
  static WanConfig preset(std::string_view name);
};

struct WanDetection {
  bool isWanDit = false;
  WanConfig config;
  std::string configSource;           // "metadata" or "tensor shapes"
  bool imageEmbedding = false;        // img_emb / k_img tensors: Wan 2.1 I2V or FLF2V (CLIP), not Wan 2.2 I2V
  std::vector<std::string> problems;  // empty ⇒ loadable
};

// Detects a Wan 2.1 DiT and its configuration from tensor names and shapes (wan21.md §1.2), or
// from a "config" JSON in the file's metadata; the image embedding (Wan 2.1 I2V / FLF2V) always from the
// shapes. Recognises VACE files and reports them as a problem ("not supported yet").
WanDetection detectWanConfig(const io::WeightSet& weights);

}  // namespace shotchain::models
