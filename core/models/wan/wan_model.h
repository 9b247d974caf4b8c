#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/attention.h"
#include "models/sequence_parallel.h"
#include "models/video_diffusion_model.h"
#include "models/wan/wan_config.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// Intermediate activations captured during a forward pass, keyed like the official submodules
// ("patch_embedding", "time_embedding", "time_projection", "text_embedding", "sinusoidal_t",
// "blocks.0.self_attn", "blocks.0.cross_attn", "blocks.0.ffn", "blocks.0", …). Batched tensors.
using WanTrace = std::map<std::string, at::Tensor>;

struct WanLoadOptions {
  // Dtype of the matmul weights (and of the matmuls); norms, modulation, the time MLP and the
  // head stay float32 as in the reference. nullopt = as stored (fp8 → bfloat16).
  std::optional<at::ScalarType> computeDtype;
  at::Device device = at::kCPU;
  AttentionImpl attention = AttentionImpl::Auto;
  // fp8 matmul weights (F8_E4M3 / F8_E5M2, scaled or not) and GGUF block-quantised ones kept as stored (one byte
  // each, or their blocks) and dequantised to the compute dtype layer by layer at each call (bit for bit what
  // loading them dequantised gives). Off: dequantised once at load.
  bool keepQuantised = false;
};

// Every tensor a WanModel of `config` has, by its official name, with its shape.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> wanParameterShapes(const WanConfig& config);

// The Wan 2.1 text-to-video DiT (wan21.md §1), its SkyReels-V2 diffusion-forcing variant, Wan 2.1 I2V / FLF2V
// (a CLIP image embedding: golden README §11.2) and the Wan 2.2 DiTs.
class WanModel final : public VideoDiffusionModel {
 public:
  // Strict: every tensor the config needs must be present with the right shape, and every tensor
  // of the file must be used. Throws std::runtime_error naming the file and the tensor.
  static WanModel load(const io::WeightSet& weights, const WanLoadOptions& options = {});
  // Loads with an explicit config (detection skipped).
  static WanModel load(const io::WeightSet& weights, const WanConfig& config, const WanLoadOptions& options = {});
  // Random weights with the golden files' scaling (for benchmarks and shape tests).
  static WanModel random(const WanConfig& config, std::uint64_t seed, const WanLoadOptions& options = {});

  const WanConfig& config() const;
  at::ScalarType computeDtype() const;

  std::string family() const override;  // "<family>, <variant>"
  DitCapabilities capabilities() const override;
  std::int64_t latentChannels() const override;
  std::int64_t fpsConditioning(double fps) const override;
  std::uint64_t weightBytes() const override;

  void setAttention(AttentionImpl impl);
  // Block-causal self-attention over blocks of `frames` patched latent frames (0: full attention), as
  // the reference's set_ar_attention. Starts at the config's causal_block_size.
  void setCausalBlockSize(std::int64_t frames);
  // Official names → tensors (in their load dtype).
  std::vector<std::pair<std::string, at::Tensor>> namedParameters() const override;
  void setLayerAdapters(std::map<std::string, std::vector<LayerAdapter>> adapters) override;
  // Replaces every parameter by transfer(name, tensor), which must return a tensor of the same
  // shape and dtype (a copy on another device, or into a reused staging buffer): how the residency
  // manager offloads the DiT to host memory and brings it back.
  void replaceParameters(const std::function<at::Tensor(const std::string&, const at::Tensor&)>& transfer) override;
  at::Device device() const override;
  // Training: every parameter requires grad and forward builds the autograd graph (out-of-place
  // attention, no NoGradGuard). Off (the default) is the inference path.
  void setTrainable(bool trainable);
  bool trainable() const;
  // The processes this model's forward is spread over (Ulysses tokens, guidance passes); starts at
  // defaultDitParallel(). Null: one process.
  void setParallel(std::shared_ptr<DitParallel> parallel);
  std::string blockCacheProblem() const override;
  void setBlockCache(BlockCache* cache) const override;
  // Wan 2.1 I2V / FLF2V: the CLIP penultimate features of the image (I2V: [257, imageDim] or [1, 257, imageDim])
  // or of the first and last frames (FLF2V: [2, 257, imageDim], or the first alone), used by every forward until
  // set again; undefined clears them. Throws std::invalid_argument for a model without an image embedding.
  void setImageEmbedding(const at::Tensor& features) const override;

  // x[i] [in_dim, F, H, W] latents (H, W multiples of the patch); t [B] timesteps, or [B, F/p_t] with
  // one timestep per patched latent frame (diffusion forcing: every token gets its own frame's
  // modulation; rows whose entries are all equal take the one-timestep path, so they give exactly its
  // result). Any dtype, converted to float64 for the sinusoid. context[i] [L_i ≤ text_len, text_dim].
  // Samples may differ in size (the batch is padded and self-attention keys are masked per sample),
  // except with per-frame timesteps or block-causal attention. fpsIndex feeds the fps embedding of
  // models that have one (0: 16 fps, 1: any other rate; see wanFpsIndex) and is ignored otherwise.
  // Returns the velocity [out_dim, F, H, W] of each sample, float32.
  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& x, const at::Tensor& t,
                                  const std::vector<at::Tensor>& context, WanTrace* trace = nullptr,
                                  std::int64_t fpsIndex = 0) const;
  // Same-size batch (classifier-free guidance as batch 2): x [B, in_dim, F, H, W],
  // t [B] or [B, F], context [B, L, text_dim] → [B, out_dim, F, H, W].
  at::Tensor forwardBatch(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                          std::int64_t fpsIndex = 0) const override;
  // Streaming on a block-causal config (causalBlockSize > 0): see VideoDiffusionModel.
  std::unique_ptr<KvCache> newKvCache(std::int64_t branches, std::int64_t latentHeight, std::int64_t latentWidth,
                                      const StreamWindow& window) const override;
  at::Tensor forwardCached(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context, KvCache& cache,
                           std::int64_t firstBranch, bool commit, std::int64_t fpsIndex = 0) const override;

  ~WanModel() override;
  WanModel(WanModel&&) noexcept;
  WanModel& operator=(WanModel&&) noexcept;

 private:
  struct Impl;
  struct StreamCall;
  explicit WanModel(std::unique_ptr<Impl> impl);
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& x, const at::Tensor& t,
                              const std::vector<at::Tensor>& context, WanTrace* trace, std::int64_t fpsIndex,
                              const StreamCall* stream) const;
  std::unique_ptr<Impl> impl_;
};

// The fps embedding's index for a frame rate, as SkyReels-V2's pipeline picks it: 0 for 16 fps, else 1.
std::int64_t wanFpsIndex(double fps);

// The sinusoidal timestep embedding: [cos(t·ω), sin(t·ω)] with ω_j = 10000^(−j/half), float64.
at::Tensor wanSinusoidalEmbedding(std::int64_t freqDim, const at::Tensor& t);

// Analytic multiply-add FLOPs (2 per MAC) of one forward pass of one sample of `tokens` tokens
// (context padded to text_len): matmuls, convolutions and attention only.
double wanForwardFlops(const WanConfig& config, std::int64_t tokens);

}  // namespace shotchain::models
