#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace shotchain::models {
class VideoVae;
}

namespace shotchain::continuity {

// The conditioning of an image-to-video DiT (Wan 2.2 I2V, wan/image2video.py; first–last frame as ComfyUI's
// WanFirstLastFrameToVideo builds it for any 1 + 4k frames), given to every model call as extra input channels
// after the latent it denoises (models::DitCapabilities::imageConditionChannels):
//   y = [mask, VAE latent of the clip with its given frames in place and mid-grey (0) everywhere else].

// The frame mask at the latent grid, [temporal, F', h, w]: 1 where a pixel frame is given. Pixel frame 0 is
// repeated `temporal` times so that every latent frame has `temporal` channels: channel c of latent frame t
// stands for pixel frame temporal·t + c − (temporal − 1), so the last pixel frame is channel temporal − 1 of
// the last latent frame.
at::Tensor imageToVideoMask(std::int64_t frames, std::int64_t latentHeight, std::int64_t latentWidth,
                            std::int64_t temporal = 4, bool firstGiven = true, bool lastGiven = false);

// y [temporal + z, F', h, w] float32 on the VAE's device for a clip of `frames` = 1 + temporal·(F' − 1) pixel
// frames starting on `first` and ending on `last` (each [3, H, W] in [−1, 1] at the clip's size, or undefined
// when not given; at least one given): one encode of [first, grey…, last].
at::Tensor imageToVideoCondition(const models::VideoVae& vae, const at::Tensor& first, const at::Tensor& last,
                                 std::int64_t frames);

// The same with a latent frame standing for the first frame's encoding: `first` [z, 1, h, w], the previous
// shot's last latent frame handed over as it is (no decode, no encode). The rest is the VAE's encoding of a
// grey clip (ending on `last` when given) whose first latent is then replaced: the causal encoder's context
// for the frames after it differs from the trained one (an approximation the report names).
at::Tensor imageToVideoConditionFromLatent(const models::VideoVae& vae, const at::Tensor& first, const at::Tensor& last,
                                           std::int64_t frames);

// Stable Video Infinity 2.0 Pro's condition (its WanVideoUnit_ImageEmbedderVAE): the anchor picture's latent
// `anchor` [z, 1, h, w] at latent frame 0, the previous clip's last latents `motion` [z, k, h, w] (undefined:
// a first clip) after it as they were denoised, zero (normalised) latents after them; the plain first-frame
// mask, so the motion latents are in y but not marked given. → [temporal + z, latentFrames, h, w].
at::Tensor sviCondition(const at::Tensor& anchor, const at::Tensor& motion, std::int64_t latentFrames,
                        std::int64_t temporal);

}  // namespace shotchain::continuity
