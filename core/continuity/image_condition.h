#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace shotchain::models {
class VideoVae;
}

namespace shotchain::continuity {

// Wan 2.2 I2V's conditioning (wan/image2video.py), given to every model call as extra input channels
// after the latent it denoises (models::DitCapabilities::imageConditionChannels):
//   y = [mask, VAE latent of the start image followed by `frames` − 1 zero (mid-grey) frames].

// The frame mask at the latent grid, [temporal, F', h, w]: pixel frame 0 known, the others not; frame 0's
// entry repeated `temporal` times so that every latent frame has `temporal` channels. Channel j of latent
// frame 0 is 1, everything after it 0.
at::Tensor imageToVideoMask(std::int64_t frames, std::int64_t latentHeight, std::int64_t latentWidth,
                            std::int64_t temporal = 4);

// y [temporal + z, F', h, w] float32 on the VAE's device. image [3, H, W] in [−1, 1] at the clip's size;
// `frames` = 1 + temporal·(F' − 1) pixel frames.
at::Tensor imageToVideoCondition(const models::VideoVae& vae, const at::Tensor& image, std::int64_t frames);

// The same with a latent frame standing for the image's encoding: `first` [z, 1, h, w], the previous shot's last
// latent frame handed over as it is (no decode, no encode). The frames after it are the VAE's encoding of
// `frames` zero frames: what image2video.py encodes after its image, but with a zero frame before them, so
// the causal encoder's context differs from the trained one (an approximation the report names).
at::Tensor imageToVideoConditionFromLatent(const models::VideoVae& vae, const at::Tensor& first, std::int64_t frames);

}  // namespace shotchain::continuity
