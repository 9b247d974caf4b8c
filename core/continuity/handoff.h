#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "sampling/sampler.h"
#include "sequence/sequence.h"

namespace shotchain::models {
class VideoVae;
}

namespace shotchain::continuity {

// What the previous shot left for the next one.
struct PreviousShot {
  // Its final latent [C, F, h, w] as stored in the ring buffer (LatentRingBuffer::handoff: a view).
  at::Tensor latent;
  // Its last decoded output frame [3, H, W] in [−1, 1]. Optional: when a mode needs it and it is
  // undefined, it is decoded from `latent` (a streaming decode of the whole previous latent).
  at::Tensor lastFrame;
};

// How a shot starts (continuity.md, one per mode). Slots 0..n−1 of the sampled latent are held at
// `held` through sampling (re-noised to each step's σ with `noise`) and restored exactly at the end.
//
// Frame counts for a shot of `frames` = 1 + 4(F−1) pixel frames (F latent frames):
// - none, latent, blend, vae_roundtrip: F latent frames sampled; every decoded frame is kept
//   (outputPixelFrames = frames).
// - latent_overlap (k = overlap latents): F + k latent frames sampled (slot 0: a 1-frame encode of the
//   previous shot's last frame; slots 1..k: its last k latents; then F − 1 new latents). Decoding gives
//   1 + 4(F + k − 1) frames; the first 1 + 4k repeat the previous shot and are dropped, so the shot adds
//   outputPixelFrames = 4(F − 1) = frames − 1 new frames: its first frame is the previous shot's last.
// - latent (k = continuity.prefix_frames, default 1): the previous shot's last k latents held at slots
//   0..k−1, then F − 1 new latents (F + k − 1 sampled). The previous shot's latent frame before them is
//   decoded ahead of the shot's own latent (decodePrefix), so the causal VAE decodes the held slot 0 as
//   the 4-frame chunk it was encoded as, not as a lone first frame (which no VAE is trained on: a wrong
//   background that the causal cache carried into the next chunks). The prefix's frame and the held
//   slots' frames but the last are dropped (dropPixelFrames = 4k); outputPixelFrames = frames.
struct Conditioning {
  ContinuityMode mode = ContinuityMode::None;
  // What the shot was conditioned on: "noise" (nothing held), "handoff", "handoff+fallback_image",
  // "fallback_image" (blend without a predecessor), "last_frame_encode" (vae_roundtrip),
  // "last_frame_encode+handoff" (latent_overlap), "start_image".
  std::string source = "noise";
  at::Tensor held;   // [C, n, h, w] clean latents for slots 0..n−1 on the device; undefined: none
  at::Tensor noise;  // [C, n, h, w] fixed noise re-noising them (CPU-drawn from handoffNoiseSeed)
  // The previous shot's tail the handoff came from (a view of the ring entry) and what stands for it
  // in this shot (same frame count, this shot's resolution). Undefined when nothing was handed off.
  at::Tensor storedTail;
  at::Tensor conditionedOn;
  std::vector<std::int64_t> sampleShape;  // the latent shape to sample [C, F', h, w]
  at::Tensor decodePrefix;                // [C, 1, h, w] decoded ahead of the latent, see above
  // The decode prefix is the encode of the previous shot's last frame, whose decode had not finished
  // when the shot was prepared (ConditioningOptions::encodeLastFrameLater): encodeDecodePrefix makes it
  // before the shot's decode. Sampling never needs it.
  bool decodePrefixPending = false;
  std::int64_t pendingFrameHeight = 0, pendingFrameWidth = 0;
  std::int64_t decodeSkipLatents = 0;  // leading sampled latent frames left out of the decode (freshClipDecode)
  std::int64_t dropPixelFrames = 0;    // decoded frames to drop at the start
  std::int64_t outputPixelFrames = 0;  // decoded frames kept
  bool resampled = false;              // the tail was resampled to a new resolution
  std::uint64_t bytesCopied = 0;       // bytes of conditioning materialised outside the ring buffer
  int framesEncoded = 0;               // VAE encodes of a frame made for it (a last frame, an image)
  double seconds = 0;                  // wall time of prepareConditioning

  std::int64_t heldFrames() const { return held.defined() ? held.size(1) : 0; }
};

// How the model of the render continues a handed latent.
struct ConditioningOptions {
  // `latent` and `latent_overlap`: decode the shot's new latents right after a one-frame encode of the
  // previous shot's last frame (decodePrefix), leaving the handed latents out of the decode
  // (DitCapabilities::freshClipContinuation). Frame counts stay those of the mode.
  bool freshClipDecode = false;
  // When the previous shot's last frame is not decoded yet (PreviousShot::lastFrame undefined) and only
  // the decode needs it, leave its encode to encodeDecodePrefix (Conditioning::decodePrefixPending)
  // instead of decoding the previous latent again.
  bool encodeLastFrameLater = false;
  // The shot's start image [3, H, W] in [−1, 1] at the shot's size (render/start_image.h): when nothing is
  // handed off it is encoded as one latent frame and held at slot 0 (source "start_image").
  at::Tensor startImage = {};
};

// A seed for the held-slot noise, derived from the shot seed (splitmix64), so it is unrelated to the
// sample noise drawn from the shot seed itself.
std::uint64_t handoffNoiseSeed(std::uint64_t shotSeed);

// Builds the conditioning of a shot with `settings` (its continuity block; overlapLatents and
// blendRatio are read for their modes). `previous` may be null (first shot, or nothing stored under
// the tag): modes then start from noise, except blend with a fallback image, which holds the image's
// encode alone. `fallbackImage` [3, H, W] in [−1, 1] (optional; resized bicubically when its size
// differs from the shot's). `latentShape` = the shot's own [C, F, h, w]. A tail of another resolution
// is resampled in latent space (resampleLatent). Encodes and decodes run on the VAE's device; the
// result lives on `device`. Throws std::invalid_argument naming the tensor for bad shapes.
Conditioning prepareConditioning(const Continuity& settings, const PreviousShot* previous, const models::VideoVae& vae,
                                 const at::Tensor& fallbackImage, const std::vector<std::int64_t>& latentShape,
                                 std::uint64_t seed, c10::Device device, const ConditioningOptions& options = {});

// Completes a pending decode prefix: the 1-frame encode of `lastFrame` [3, H, W] (the previous shot's
// last decoded frame) on `device`. Does nothing when none is pending.
void encodeDecodePrefix(Conditioning& conditioning, const models::VideoVae& vae, const at::Tensor& lastFrame,
                        c10::Device device);

// The sampler hook holding the slots: x[:, 0:n] = (1 − σ)·held + σ·noise before every model call
// (flow matching: x_σ = (1 − σ)·x₀ + σ·ε). Empty function when nothing is held. Keeps its own
// references to the tensors.
sampling::BeforeStepHook holdSlotsHook(const Conditioning& conditioning);

// Writes the held latents back into slots 0..n−1 of the sampled latent, exactly (in place).
void restoreHeldSlots(at::Tensor& latent, const Conditioning& conditioning);

// What the VAE decodes for a shot's sampled latent [C, F', h, w]: decodePrefix then the latent, or
// the latent itself when there is no prefix.
at::Tensor decodeInput(const at::Tensor& latent, const Conditioning& conditioning);

// The decoded frames [3, T, H, W] (of decodeInput) without the first dropPixelFrames (a view).
at::Tensor keptFrames(const at::Tensor& decoded, const Conditioning& conditioning);

// MSE between the stored tail and what the shot was conditioned on (over the same frames; a
// resampled tail is compared at the stored resolution by resampling it back). nullopt when nothing was
// handed off. Exactly 0 for `latent` at an unchanged resolution.
std::optional<double> handoffMse(const Conditioning& conditioning);

// The round-trip baseline: decode `tail` [C, n, h, w] alone, encode the result, MSE to the tail.
double roundtripMse(const models::VideoVae& vae, const at::Tensor& tail);

// The previous shot's last output frame [3, H, W], by a streaming decode of its latent.
at::Tensor decodeLastFrame(const models::VideoVae& vae, const at::Tensor& latent);

}  // namespace shotchain::continuity
