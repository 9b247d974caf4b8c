#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// The activation between the decoder's convolutions. The official taehv.py uses ReLU for every file; ComfyUI and
// LightX2V use LeakyReLU(0.2) for Hunyuan Video 1.5's 32-channel files.
enum class TaehvActivation { Relu, LeakyRelu };

// The base TAEHV decoder (madebyollin/taehv, taehv.py `TAEHV.decoder`; golden README §14):
//   tanh(x/3)·3, conv3×3(C→w0), act,
//   3 × [MemBlock×3 (w_s), nearest upsample ×2, TGrow(w_s, timeStrides[s]), conv3×3(w_s→w_{s+1}, no bias)],
//   act, conv3×3(w3→3·p²), pixel_shuffle(p), clamp [0, 1], the first timeUpscale()−1 frames dropped.
// Every value but the activation and spaceUpscale is read from tensor shapes (detectTaehv); the defaults are taew2_1.
struct TaehvConfig {
  std::int64_t latentChannels = 16;                      // 16 Wan 2.1 / 2.2-14B, 48 Wan 2.2-5B
  std::int64_t patchSize = 1;                            // 1 Wan 2.1, 2 Wan 2.2-5B
  std::array<std::int64_t, 4> widths{256, 128, 64, 64};  // n_f: the three stages and the last conv's input
  std::array<std::int64_t, 3> timeStrides{1, 2, 2};      // TGrow strides (decoder_time_upscale (False, True, True))
  std::array<bool, 3> spaceUpscale{true, true, true};    // decoder_space_upscale: not stored in the file
  TaehvActivation activation = TaehvActivation::Relu;

  // Frames per latent frame before trimming: the product of the time strides (4 for Wan).
  std::int64_t timeUpscale() const;
  // Frames dropped at the start of the decoded clip (frames_to_trim): timeUpscale() − 1.
  std::int64_t framesToTrim() const { return timeUpscale() - 1; }
  // Pixels per latent pixel: 2 per enabled spatial upsample, times the patch size (8 for Wan 2.1, 16 for 2.2-5B).
  std::int64_t spatialUpscale() const;
  // Decoded frames for `latentFrames` latent frames: T·timeUpscale() − framesToTrim() (4T − 3 for Wan).
  std::int64_t outputFrames(std::int64_t latentFrames) const;
  // "taew2_1" (also lighttaew2_1 and Hunyuan's taehv: one layout), "taew2_2" (also lighttaew2_2), "taehv1_5",
  // "taeltx", "tiny" (the golden test sizes) or "custom".
  std::string variant() const;
  // Throws std::invalid_argument describing the first inconsistency.
  void check() const;
};

struct TaehvDetection {
  bool isTaehv = false;     // a base TAEHV decoder is there (decoder.1.weight …)
  bool hasEncoder = false;  // encoder.* tensors are there too (ignored when loading)
  TaehvConfig config;
  std::vector<std::string> problems;  // empty ⇒ loadable
  std::vector<std::string> notes;     // facts the shapes cannot settle (e.g. the 32-channel activation)
};

// Reads what the official constructor would be given (latent_channels, patch_size, the TGrow strides, the widths)
// from tensor shapes. Problems: no decoder (an encoder-only file), a "super" decoder (SuperMemBlock: taew2_2_super,
// taehv1_5_super), TAEH3's 24-channel chunked decode, shapes that fit no TAEHV decoder.
TaehvDetection detectTaehv(const io::WeightSet& weights);

struct TaehvLoadOptions {
  at::ScalarType computeDtype = at::kFloat;  // float32, or bfloat16 / half for the weights and activations
  at::Device device = at::kCPU;
  // The official constructor's cheaper previews: a stage whose timeUpscale entry is false uses TGrow stride 1
  // with the last-timestep rows of its weights (patch_tgrow_layers), so fewer frames come out and fewer are
  // trimmed; all false = one frame per latent frame. A false spaceUpscale entry skips that stage's ×2 upsample.
  std::array<bool, 3> timeUpscale{true, true, true};
  std::array<bool, 3> spaceUpscale{true, true, true};
  std::optional<TaehvActivation> activation;  // nullopt: the detected one
};

// The TAEHV decoder: the DiT's normalised latents (TAEHV uses no latent mean / std) to RGB frames.
class TaehvDecoder {
 public:
  // Strict: every decoder tensor present with the right shape; encoder tensors may be there and are ignored;
  // anything else is an error. Throws std::runtime_error naming the file and the tensor.
  static TaehvDecoder load(const io::WeightSet& weights, const TaehvLoadOptions& options = {});

  // The configuration decoded with: the detected one with the load options applied.
  const TaehvConfig& config() const;
  at::ScalarType computeDtype() const;
  at::Device device() const;
  std::uint64_t weightBytes() const;

  // latents [C, T, h, w] or [B, C, T, h, w] (any float dtype; moved to the decoder's device, never modified) →
  // float32 RGB in [0, 1], [T_out, 3, H, W] or [B, T_out, 3, H, W] (NTCHW, as the official decode_video returns),
  // T_out = config().outputFrames(T), H = h·spatialUpscale(). The whole clip goes through each layer at once
  // (decode_video(parallel=True)); latentFramesPerChunk > 0 decodes that many latent frames at a time, carrying
  // each MemBlock's last input frame into the next chunk: the same result with activations for one chunk only.
  at::Tensor decode(const at::Tensor& latents, std::int64_t latentFramesPerChunk = 0) const;

  ~TaehvDecoder();
  TaehvDecoder(TaehvDecoder&&) noexcept;
  TaehvDecoder& operator=(TaehvDecoder&&) noexcept;

 private:
  struct Impl;
  explicit TaehvDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shotchain::models
