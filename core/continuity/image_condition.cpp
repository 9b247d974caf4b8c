#include "continuity/image_condition.h"

#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

#include "models/video_vae.h"

namespace shotchain::continuity {

at::Tensor imageToVideoMask(std::int64_t frames, std::int64_t latentHeight, std::int64_t latentWidth,
                            std::int64_t temporal) {
  if (frames < 1 || (frames - 1) % temporal != 0)
    throw std::invalid_argument("image-to-video mask: " + std::to_string(frames) + " frames is not 1 + " +
                                std::to_string(temporal) + "·k");
  const std::int64_t latentFrames = (frames - 1) / temporal + 1;
  at::Tensor mask = at::zeros({1, frames + temporal - 1, latentHeight, latentWidth}, at::kFloat);
  mask.narrow(1, 0, temporal).fill_(1.0);  // frame 0, repeated `temporal` times
  return mask.view({1, latentFrames, temporal, latentHeight, latentWidth}).transpose(1, 2)[0].contiguous();
}

at::Tensor imageToVideoCondition(const models::VideoVae& vae, const at::Tensor& image, std::int64_t frames) {
  if (image.dim() != 3 || image.size(0) != 3)
    throw std::invalid_argument("image-to-video condition: the start image must be [3, H, W]");
  const models::VaeGeometry geometry = vae.geometry();
  const std::int64_t spatial = geometry.spatialFactor;
  if (image.size(1) % spatial != 0 || image.size(2) % spatial != 0)
    throw std::invalid_argument("image-to-video condition: the image's size is not a multiple of the VAE's " +
                                std::to_string(spatial));
  const at::Tensor first = image.to(vae.device(), at::kFloat).unsqueeze(1);
  const at::Tensor video =
      at::cat({first, at::zeros({3, frames - 1, image.size(1), image.size(2)}, first.options())}, 1);
  const at::Tensor latent = vae.encode(video);
  const at::Tensor mask =
      imageToVideoMask(frames, image.size(1) / spatial, image.size(2) / spatial, geometry.temporalFactor)
          .to(latent.device());
  return at::cat({mask, latent}, 0);
}

at::Tensor imageToVideoConditionFromLatent(const models::VideoVae& vae, const at::Tensor& first, std::int64_t frames) {
  if (first.dim() != 4 || first.size(1) != 1)
    throw std::invalid_argument("image-to-video condition: the handed latent must be one frame [z, 1, h, w]");
  const models::VaeGeometry geometry = vae.geometry();
  const std::int64_t spatial = geometry.spatialFactor;
  at::Tensor latent = vae.encode(at::zeros({3, frames, first.size(2) * spatial, first.size(3) * spatial},
                                           at::TensorOptions().device(vae.device())));
  latent.narrow(1, 0, 1).copy_(first.to(latent.device(), latent.scalar_type()));
  const at::Tensor mask =
      imageToVideoMask(frames, first.size(2), first.size(3), geometry.temporalFactor).to(latent.device());
  return at::cat({mask, latent}, 0);
}

}  // namespace shotchain::continuity
