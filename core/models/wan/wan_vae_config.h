#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// Constructor arguments of the official WanVAE_ (wan21.md §2.1, wan22.md §2; golden metadata "config").
// attn_scales is always empty and dropout 0 in every published checkpoint; other values are refused.
struct WanVaeConfig {
  // 21: the Wan 2.1 layout. 22: the Wan 2.2 layout (wan22.md §2): a 2×2 patchify around the coder,
  // shortcuts around every stage, a decoder of its own width, no channel halving at the upsamples.
  int generation = 21;
  std::int64_t dim = 96;
  std::int64_t decDim = 0;  // the decoder's width (Wan 2.2's dec_dim); 0 = dim
  std::int64_t zDim = 16;
  std::vector<std::int64_t> dimMult{1, 2, 4, 4};
  std::int64_t numResBlocks = 2;
  // Encoder stages 0..n-2; the decoder uses the reversed list (wan21.md §2.1).
  std::vector<bool> temporalDownsample{false, true, true};

  std::int64_t stages() const { return static_cast<std::int64_t>(dimMult.size()); }
  std::int64_t decoderDim() const { return decDim > 0 ? decDim : dim; }
  // Pixels per side folded into channels before the encoder (2 for Wan 2.2, else 1).
  std::int64_t patch() const { return generation == 22 ? 2 : 1; }
  std::int64_t pixelChannels() const { return 3 * patch() * patch(); }
  // 8 for Wan 2.1: 2^(stages-1); 16 for Wan 2.2 (the patchify doubles it).
  std::int64_t spatialFactor() const;
  // 4 for Wan 2.1: 2^(number of temporal downsamples).
  std::int64_t temporalFactor() const;
  // Pixel frames ↔ latent frames: T = 1 + factor·(T'−1).
  std::int64_t latentFrames(std::int64_t pixelFrames) const;  // throws std::invalid_argument unless T = 1 + factor·k
  std::int64_t pixelFrames(std::int64_t latentFrames) const;
  std::uint64_t parameterCount() const;
  // "wan2.1" / "wan2.2" (the published VAEs), "tiny" (the golden test sizes) or "custom".
  std::string variant() const;
  // Throws std::invalid_argument describing the first inconsistency.
  void check() const;

  // The golden/official "config" field names (dim, z_dim, dim_mult, num_res_blocks,
  // temperal_downsample, attn_scales, dropout).
  std::string toJson() const;
  static WanVaeConfig fromJson(std::string_view json);  // throws std::invalid_argument
  // "wan21" (alias "wan2.1"), "tiny", "wan22" (alias "wan2.2"), "tiny22"; throws std::invalid_argument for other names.
  static WanVaeConfig preset(std::string_view name);
};

// One block of the encoder's `downsamples` / the decoder's `upsamples` (and the `middle` blocks).
struct WanVaeBlock {
  // StageInput keeps the stage's input for the shortcut that closes the stage (Wan 2.2): AvgDownShortcut
  // adds its channel-grouped average over factorT × factorS² positions, DupUpShortcut its channel-repeated
  // spread over them (dropping factorT − 1 leading frames on the first chunk). They have no weights.
  enum class Kind {
    Residual,
    Attention,
    Upsample2d,
    Upsample3d,
    Downsample2d,
    Downsample3d,
    StageInput,
    AvgDownShortcut,
    DupUpShortcut
  };
  Kind kind = Kind::Residual;
  std::string prefix;                     // "decoder.upsamples.3."
  std::int64_t in = 0, out = 0;           // channels
  std::int64_t factorT = 1, factorS = 1;  // the shortcuts' strides
};
// conv1 → downsamples → middle (3 blocks), in order; head and the 1×1×1 convs are implied.
std::vector<WanVaeBlock> wanVaeEncoderBlocks(const WanVaeConfig& config);
// conv1 → middle (3 blocks) → upsamples, in order.
std::vector<WanVaeBlock> wanVaeDecoderBlocks(const WanVaeConfig& config);

struct WanVaeParamSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};
// Every tensor of the state dict (official names), in a fixed order.
std::vector<WanVaeParamSpec> wanVaeParameterSpecs(const WanVaeConfig& config);

// The 16 per-channel latent statistics of Wan 2.1 (wan21.md §2.4), as the reference wrapper holds them.
extern const std::array<double, 16> kWanVaeLatentMean;
extern const std::array<double, 16> kWanVaeLatentStd;
// The 48 of Wan 2.2 (wan22.md §2.3).
extern const std::array<double, 48> kWan22VaeLatentMean;
extern const std::array<double, 48> kWan22VaeLatentStd;

struct WanVaeDetection {
  bool isWanVae = false;
  WanVaeConfig config;
  std::string configSource;           // "metadata" or "tensor shapes"
  std::vector<std::string> problems;  // empty ⇒ loadable
};

// Detects a Wan 2.1 or 2.2 VAE (official / ComfyUI names) and its configuration from the tensor shapes,
// or from a "config" JSON in the file's metadata (checked against the shapes).
WanVaeDetection detectWanVaeConfig(const io::WeightSet& weights);

}  // namespace shotchain::models
